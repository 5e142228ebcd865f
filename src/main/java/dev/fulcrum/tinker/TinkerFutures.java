package dev.fulcrum.tinker;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.narayana.jta.QuarkusTransaction;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.json.StoredJson;

/**
 * The futures of a caller's operations as {@code retrieve_future} answers them (waiting while one is pending), and the
 * end of a future the server runs itself (a sample). A future belongs to the user who made it: others get 404.
 */
@ApplicationScoped
public class TinkerFutures {

    /** How often a waiting {@code retrieve_future} reads the operation again. */
    private static final long POLL_MILLIS = 100;

    @Inject
    Access access;

    @Inject
    TinkerSettings settings;

    @Inject
    StoredJson json;

    @Inject
    Tinker tinker;

    /** A future's state as retrieve_future answers it. */
    interface Outcome {
    }

    /** An operation's result (JSON) and the kind of the operation ({@code forward}, {@code sample}, ...). */
    record Done(String result, String kind) implements Outcome {
    }

    record Failed(String error, String category) implements Outcome {
    }

    record Pending(String queueState, String reason) implements Outcome {
    }

    record Expired() implements Outcome {
    }

    /**
     * The future's outcome, waiting up to {@code fulcrum.tinker.future-wait} while it is pending. 404 for an unknown
     * future or another user's.
     */
    public Outcome retrieve(String requestId) {
        long userId = access.caller().userId();
        long deadline = System.nanoTime() + settings.futureWait().toNanos();
        while (true) {
            Outcome outcome = QuarkusTransaction.requiringNew().call(() -> outcome(requestId, userId));
            if (!(outcome instanceof Pending) || System.nanoTime() >= deadline) {
                return outcome;
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return outcome;
            }
        }
    }

    private Outcome outcome(String requestId, long userId) {
        TinkerRequest request = TinkerRequest.findById(requestId);
        if (request == null || request.userId != userId) {
            throw ApiException.notFound("Future " + requestId + " not found");
        }
        switch (request.state) {
            case "done":
                return new Done(request.result, request.kind);
            case "failed":
                return new Failed(request.error, request.category);
            case "expired":
                return new Expired();
            default:
                TinkerModel model = request.modelId == null ? null : TinkerModel.findById(request.modelId);
                if (model != null && model.state.equals("waiting")) {
                    return new Pending("paused_capacity",
                            "waiting for a fulcrum-worker of " + model.baseModel + " to hold model " + model.id);
                }
                return new Pending("active", null);
        }
    }

    /** Ends a running future with its result, or with {@code error} and its category. */
    public void end(String requestId, ObjectNode result, String error, String category) {
        QuarkusTransaction.requiringNew().run(() -> {
            TinkerRequest request = TinkerRequest.findById(requestId);
            if (request == null || !(request.state.equals("running") || request.state.equals("pending"))) {
                return;
            }
            if (error == null) {
                request.state = "done";
                request.result = json.write(result);
            } else {
                request.state = "failed";
                request.error = error.length() > 4000 ? error.substring(0, 4000) : error;
                request.category = category;
            }
            request.endedAt = tinker.now();
        });
    }
}
