package dev.fulcrum.inference.hub;

/** A pull that cannot go on, in words: what the Hub answered, or what happened to the file. */
public class HubException extends RuntimeException {

    /** What went wrong, for the status an interface answers with. */
    public enum Reason {
        /** The repository, revision, file or quantisation does not exist (404). */
        NOT_FOUND,
        /** The Hub wants a token, or another one: a gated or private repository (401 or 403 from the Hub). */
        REFUSED,
        /** The Hub cannot be reached or keeps failing (after the retries). */
        UNREACHABLE,
        /** The file's sha256 is not the one the Hub states, or the Hub answered something that makes no sense. */
        BAD_FILE,
        /** The disk the model directory is on is full. */
        NO_SPACE
    }

    private final Reason reason;

    public HubException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public HubException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
