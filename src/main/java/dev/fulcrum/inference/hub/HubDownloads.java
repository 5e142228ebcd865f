package dev.fulcrum.inference.hub;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.fulcrum.inference.hub.HubException.Reason;
import dev.fulcrum.platform.errors.StorageFull;

/**
 * A file's bytes from the Hub ({@code /{repo}/resolve/{commit}/{path}}), resumable: the redirect to the file server is
 * followed here (the token left behind), the bytes stream to a partial file, and a download that broke off, answered a
 * 429 or a 5xx, or received nothing for the read timeout (a watchdog closes it) goes on from the bytes held with
 * {@code Range: bytes=N-} after a back-off, from the beginning when the server answers 200.
 */
final class HubDownloads {

    private static final int MAX_REDIRECTS = 10;
    private static final Pattern CONTENT_RANGE = Pattern.compile("bytes\\s+(\\d+)-");

    private final HubHttp hub;
    private final ScheduledExecutorService watchdog;

    HubDownloads(HubHttp hub) {
        this.hub = hub;
        this.watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "model-pull-watchdog");
            thread.setDaemon(true);
            return thread;
        });
    }

    void close() {
        watchdog.shutdownNow();
    }

    /** One file's download under way: cancel it to stop (the partial file stays, to be resumed). */
    static final class Transfer {
        private volatile boolean cancelled;
        private volatile InputStream stream;
        private volatile long lastByteAt = System.nanoTime();
        /** The sha256 the Hub's redirect stated ({@code X-Linked-Etag}), when it did. */
        volatile String linkedSha256;

        void cancel() {
            cancelled = true;
            closeStream();
        }

        boolean cancelled() {
            return cancelled;
        }

        private void closeStream() {
            InputStream open = stream;
            if (open != null) {
                try {
                    open.close();
                } catch (IOException e) {
                    // closing to stop a read: nothing to do
                }
            }
        }
    }

    /**
     * Downloads {@code file} into {@code part}, continuing from what {@code part} already holds; {@code written} hears
     * the bytes of the file held so far. Ends when {@code part} holds {@code file.size()} bytes.
     */
    void download(HubName name, String revision, String commit, HubFile file, Path part, Transfer transfer,
            LongConsumer written) {
        URI resolve = URI
                .create(hub.endpoint() + "/" + name.repo() + "/resolve/" + commit + "/" + HubHttp.path(file.path()));
        int failures = 0;
        while (true) {
            if (transfer.cancelled()) {
                throw new CancellationException("cancelled");
            }
            long have = size(part);
            if (have > file.size()) {
                delete(part);
                have = 0;
            }
            written.accept(have);
            if (have == file.size() && Files.exists(part)) {
                return;
            }
            HttpResponse<InputStream> answer;
            try {
                answer = follow(resolve, have, transfer);
            } catch (IOException e) {
                if (transfer.cancelled()) {
                    throw new CancellationException("cancelled");
                }
                if (++failures > hub.retries()) {
                    throw hub.unreachable(e);
                }
                hub.pause(failures, null);
                continue;
            }
            int status = answer.statusCode();
            if (status == 416) {
                close(answer);
                delete(part); // what we hold is not a beginning of the file the server has
                if (++failures > hub.retries()) {
                    throw new HubException(Reason.BAD_FILE,
                            "The file server keeps refusing the range of " + file.path());
                }
                continue;
            }
            if (status == 429 || status >= 500) {
                close(answer);
                if (++failures > hub.retries()) {
                    throw hub.refusal(status, "", "", name, revision, file.path());
                }
                hub.pause(failures, answer.headers().firstValue("Retry-After").orElse(null));
                continue;
            }
            if (status != 200 && status != 206) {
                close(answer);
                throw hub.refusal(status, answer.headers().firstValue("X-Error-Code").orElse(""),
                        answer.headers().firstValue("X-Error-Message").orElse(""), name, revision, file.path());
            }
            if (status == 206 && rangeStart(answer) != have) {
                close(answer);
                delete(part); // a range other than the one asked for: start again from the beginning
                if (++failures > hub.retries()) {
                    throw new HubException(Reason.BAD_FILE, "The file server answers other ranges than asked for");
                }
                continue;
            }
            boolean append = status == 206;
            long before = append ? have : 0;
            long after = copy(answer, part, append, before, transfer, written);
            if (transfer.cancelled()) {
                throw new CancellationException("cancelled");
            }
            if (after < file.size()) {
                // the connection ended early: a retry resumes, counted only when nothing came
                failures = after > before ? 0 : failures + 1;
                if (failures > hub.retries()) {
                    throw new HubException(Reason.UNREACHABLE, "The download of " + file.path() + " from "
                            + resolve.getHost() + " keeps breaking off at " + after + " of " + file.size() + " bytes");
                }
                hub.pause(Math.max(1, failures), null);
            }
        }
    }

    /** Streams the body to the file; returns the bytes the file holds after. A broken connection just ends it. */
    private long copy(HttpResponse<InputStream> answer, Path part, boolean append, long from, Transfer transfer,
            LongConsumer written) {
        long have = from;
        long stall = Math.max(1, hub.readTimeout().toMillis());
        transfer.lastByteAt = System.nanoTime();
        ScheduledFuture<?> check = watchdog.scheduleAtFixedRate(() -> {
            if (System.nanoTime() - transfer.lastByteAt > TimeUnit.MILLISECONDS.toNanos(stall)) {
                transfer.closeStream();
            }
        }, stall / 4 + 1, stall / 4 + 1, TimeUnit.MILLISECONDS);
        try (InputStream in = answer.body();
                OutputStream out = Files.newOutputStream(part, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                        append ? StandardOpenOption.APPEND : StandardOpenOption.TRUNCATE_EXISTING)) {
            transfer.stream = in;
            if (transfer.cancelled()) {
                return have;
            }
            byte[] buffer = new byte[1 << 16];
            int n;
            while ((n = readSome(in, buffer)) > 0) {
                out.write(buffer, 0, n);
                have += n;
                transfer.lastByteAt = System.nanoTime();
                written.accept(have);
            }
        } catch (IOException e) {
            if (StorageFull.noSpace(e)) {
                throw new HubException(Reason.NO_SPACE, "The disk is full: no space left in " + part.getParent()
                        + " (fulcrum.inference.hub.model-dir) for " + part.getFileName(), e);
            }
        } finally {
            transfer.stream = null;
            check.cancel(false);
        }
        return have;
    }

    /** A read, where a connection dropped or closed under it is the end of what came. */
    private static int readSome(InputStream in, byte[] buffer) {
        try {
            return in.read(buffer);
        } catch (IOException e) {
            return -1;
        }
    }

    /** The answer to a GET of {@code uri} from byte {@code from}, redirects followed (the token left behind). */
    private HttpResponse<InputStream> follow(URI uri, long from, Transfer transfer) throws IOException {
        URI at = uri;
        for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
            HttpResponse<InputStream> answer;
            try {
                answer = hub.client().send(hub.request(at, from), HttpResponse.BodyHandlers.ofInputStream());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CancellationException("interrupted");
            }
            answer.headers().firstValue("X-Linked-Etag").map(HubDownloads::etag)
                    .filter(e -> HubClient.SHA256.matcher(e).matches()).ifPresent(sha -> transfer.linkedSha256 = sha);
            int status = answer.statusCode();
            if (status == 301 || status == 302 || status == 303 || status == 307 || status == 308) {
                close(answer);
                String location = answer.headers().firstValue("Location")
                        .orElseThrow(() -> new IOException("A redirect without Location from " + uri.getHost()));
                at = at.resolve(location);
                continue;
            }
            return answer;
        }
        throw new HubException(Reason.BAD_FILE, "More than " + MAX_REDIRECTS + " redirects from " + uri);
    }

    private static String etag(String value) {
        String tag = value.strip();
        if (tag.startsWith("W/")) {
            tag = tag.substring(2);
        }
        return tag.replace("\"", "").toLowerCase(Locale.ROOT);
    }

    private static long rangeStart(HttpResponse<?> answer) {
        // Content-Range: bytes 100-199/200
        Matcher m = CONTENT_RANGE.matcher(answer.headers().firstValue("Content-Range").orElse(""));
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    private static void close(HttpResponse<InputStream> answer) {
        try {
            answer.body().close();
        } catch (IOException e) {
            // a body we do not read
        }
    }

    private static long size(Path part) {
        try {
            return Files.exists(part) ? Files.size(part) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    private static void delete(Path part) {
        try {
            Files.deleteIfExists(part);
        } catch (IOException e) {
            throw new HubException(Reason.BAD_FILE, "Cannot delete " + part + ": " + e.getMessage(), e);
        }
    }
}
