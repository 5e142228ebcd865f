package dev.fulcrum.inference.hub;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.inference.hub.HubException.Reason;
import dev.fulcrum.platform.OutboundHttp;
import dev.fulcrum.platform.StorageFull;

/**
 * The Hugging Face Hub's HTTP API, as {@code huggingface_hub} speaks it: a revision's commit
 * ({@code /api/models/{repo}/revision/{revision}}), the files at that commit ({@code /api/models/{repo}/tree/{commit}},
 * recursive, following the {@code Link} header's {@code next} pages) and a file's bytes
 * ({@code /{repo}/resolve/{commit}/{path}}, whose redirect to the file server is followed here, so that the token goes
 * only to the Hub's own origin). Blocking: it runs on the pulls' own threads, never on an event loop. Requests that
 * fail for a dropped connection, a 429 or a 5xx are retried with back-off; a download resumes with {@code Range}.
 */
final class HubClient {

    private static final Pattern NEXT = Pattern.compile("<([^>]+)>\\s*;\\s*rel=\"?next\"?");
    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
    private static final int MAX_REDIRECTS = 10;

    private final URI endpoint;
    private final String token;
    private final Duration readTimeout;
    private final int retries;
    private final Duration retryDelay;
    private final Duration maxRetryDelay;
    private final HttpClient http;
    private final ExecutorService httpThreads;
    private final ObjectMapper json;
    private final ScheduledExecutorService watchdog;

    HubClient(String endpoint, String token, Duration connectTimeout, Duration readTimeout, int retries,
            Duration retryDelay, Duration maxRetryDelay, ObjectMapper json) {
        this.endpoint = URI.create(endpoint.endsWith("/") ? endpoint.substring(0, endpoint.length() - 1) : endpoint);
        this.token = token == null || token.isBlank() ? null : token.strip();
        this.readTimeout = readTimeout;
        this.retries = retries;
        this.retryDelay = retryDelay;
        this.maxRetryDelay = maxRetryDelay;
        this.json = json;
        this.httpThreads = Executors.newCachedThreadPool(r -> {
            Thread thread = new Thread(r, "model-pull-http");
            thread.setDaemon(true);
            return thread;
        });
        this.http = OutboundHttp.blocking(connectTimeout, httpThreads);
        this.watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "model-pull-watchdog");
            thread.setDaemon(true);
            return thread;
        });
    }

    String endpoint() {
        return endpoint.toString();
    }

    boolean hasToken() {
        return token != null;
    }

    void close() {
        watchdog.shutdownNow();
        httpThreads.shutdownNow();
    }

    /** The commit of {@code revision} and the files chosen by the name's tag. */
    HubPlan plan(HubName name, String revision) {
        JsonNode info = getJson(URI.create(endpoint + "/api/models/" + name.repo() + "/revision/" + segment(revision)),
                name, revision);
        String commit = info.path("sha").asText(null);
        if (commit == null || commit.isBlank()) {
            throw new HubException(Reason.BAD_FILE,
                    "The Hub at " + endpoint + " named no commit for " + name.repo() + " at " + revision);
        }
        List<HubFile> files = new ArrayList<>();
        URI page = URI.create(endpoint + "/api/models/" + name.repo() + "/tree/" + commit + "?recursive=true");
        for (int pages = 0; page != null; pages++) {
            if (pages > 10_000) {
                throw new HubException(Reason.BAD_FILE, "The Hub's file list of " + name.repo() + " never ends");
            }
            HttpResponse<String> answer = send(page, name, revision);
            JsonNode entries = parse(answer.body(), page);
            for (JsonNode entry : entries) {
                if ("file".equals(entry.path("type").asText())) {
                    String sha = entry.path("lfs").path("oid").asText(null);
                    files.add(new HubFile(entry.path("path").asText(), entry.path("size").asLong(),
                            sha != null && SHA256.matcher(sha).matches() ? sha : null));
                }
            }
            URI current = page;
            page = answer.headers().firstValue("Link").map(link -> next(current, link)).orElse(null);
        }
        return new HubPlan(name, revision, commit, HubFiles.choose(files, name, revision));
    }

    private URI next(URI page, String link) {
        Matcher m = NEXT.matcher(link);
        return m.find() ? page.resolve(m.group(1)) : null;
    }

    private JsonNode getJson(URI uri, HubName name, String revision) {
        return parse(send(uri, name, revision).body(), uri);
    }

    private JsonNode parse(String body, URI uri) {
        try {
            return json.readTree(body);
        } catch (IOException e) {
            throw new HubException(Reason.BAD_FILE, "The Hub's answer to " + uri + " is not JSON");
        }
    }

    /** A GET of the Hub's API, retried; an answer other than 200 is the error it means. */
    private HttpResponse<String> send(URI uri, HubName name, String revision) {
        for (int attempt = 1;; attempt++) {
            HttpResponse<String> answer;
            try {
                answer = http.send(request(uri, -1), HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                if (attempt > retries) {
                    throw unreachable(e);
                }
                pause(attempt, null);
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CancellationException("interrupted");
            }
            int status = answer.statusCode();
            if (status == 200) {
                return answer;
            }
            if ((status == 429 || status >= 500) && attempt <= retries) {
                pause(attempt, answer.headers().firstValue("Retry-After").orElse(null));
                continue;
            }
            throw refusal(status, answer.headers().firstValue("X-Error-Code").orElse(""),
                    answer.headers().firstValue("X-Error-Message").orElse(""), name, revision, null);
        }
    }

    private HubException unreachable(IOException e) {
        return new HubException(Reason.UNREACHABLE,
                "The Hub cannot be reached at " + endpoint + " (" + e.getClass().getSimpleName()
                        + (e.getMessage() == null ? "" : ": " + e.getMessage()) + "); set HF_ENDPOINT or "
                        + "fulcrum.inference.hub.endpoint for a mirror",
                e);
    }

    /** What an answer other than 200 means, in words (the Hub's {@code X-Error-Code} as huggingface_hub reads it). */
    private HubException refusal(int status, String code, String message, HubName name, String revision, String file) {
        String where = " (the Hub at " + endpoint + " answered " + status + (message.isBlank() ? "" : ": " + message)
                + ")";
        if ("RevisionNotFound".equals(code)) {
            return new HubException(Reason.NOT_FOUND,
                    "The revision " + revision + " of " + name.repo() + " does not exist" + where);
        }
        if ("EntryNotFound".equals(code) && file != null) {
            return new HubException(Reason.NOT_FOUND,
                    "The file " + file + " of " + name.repo() + " at " + revision + " does not exist" + where);
        }
        if ("GatedRepo".equals(code)) {
            return new HubException(Reason.REFUSED, status == 401
                    ? "The repository " + name.repo() + " is gated and needs a token of an account granted access: "
                            + (token == null ? "Fulcrum sends none (set HF_TOKEN or fulcrum.inference.hub.token)"
                                    : "the Hub refused the token Fulcrum sends")
                            + where
                    : "The repository " + name.repo() + " is gated and the account of the token Fulcrum sends was "
                            + "not granted access: accept its conditions on the Hub with that account" + where);
        }
        if (status == 401) {
            return new HubException(Reason.REFUSED,
                    "The repository " + name.repo() + " does not exist, or it is " + "private or gated and "
                            + (token == null
                                    ? "needs a token: Fulcrum sends none (set HF_TOKEN or fulcrum.inference.hub.token)"
                                    : "the token Fulcrum sends does not give access to it")
                            + where);
        }
        if (status == 403) {
            return new HubException(Reason.REFUSED, "The token Fulcrum sends may not read " + name.repo() + where);
        }
        if (status == 404 || "RepoNotFound".equals(code)) {
            return new HubException(Reason.NOT_FOUND,
                    (file == null ? "The repository " + name.repo()
                            : "The file " + file + " of " + name.repo() + " at " + revision) + " does not exist"
                            + where);
        }
        if (status == 429 || status >= 500) {
            return new HubException(Reason.UNREACHABLE, "The Hub kept failing after " + retries + " retries" + where);
        }
        return new HubException(Reason.BAD_FILE, "The Hub's answer makes no sense" + where);
    }

    private HttpRequest request(URI uri, long from) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).GET().timeout(readTimeout).header("User-Agent",
                "fulcrum");
        if (token != null && sameOrigin(uri, endpoint)) {
            request.header("Authorization", "Bearer " + token);
        }
        if (from > 0) {
            request.header("Range", "bytes=" + from + "-");
        }
        return request.build();
    }

    static boolean sameOrigin(URI a, URI b) {
        return Objects.equals(lower(a.getScheme()), lower(b.getScheme()))
                && Objects.equals(lower(a.getHost()), lower(b.getHost())) && port(a) == port(b);
    }

    private static String lower(String s) {
        return s == null ? null : s.toLowerCase(Locale.ROOT);
    }

    private static int port(URI uri) {
        return uri.getPort() >= 0 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }

    /** A path segment (a revision such as {@code refs/pr/1}) percent-encoded whole. */
    private static String segment(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A repository path with each segment percent-encoded. */
    private static String path(String path) {
        StringBuilder encoded = new StringBuilder();
        for (String part : path.split("/")) {
            if (!encoded.isEmpty()) {
                encoded.append('/');
            }
            encoded.append(segment(part));
        }
        return encoded.toString();
    }

    private void pause(int attempt, String retryAfter) {
        long millis = Math.min(maxRetryDelay.toMillis(), retryDelay.toMillis() << Math.min(attempt - 1, 20));
        if (retryAfter != null) {
            try {
                millis = Math.min(maxRetryDelay.toMillis(),
                        Math.max(millis, Long.parseLong(retryAfter.strip()) * 1000));
            } catch (NumberFormatException e) {
                // an HTTP date: the back-off stands
            }
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancellationException("interrupted");
        }
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
        URI resolve = URI.create(endpoint + "/" + name.repo() + "/resolve/" + commit + "/" + path(file.path()));
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
                if (++failures > retries) {
                    throw unreachable(e);
                }
                pause(failures, null);
                continue;
            }
            int status = answer.statusCode();
            if (status == 416) {
                close(answer);
                delete(part); // what we hold is not a beginning of the file the server has
                if (++failures > retries) {
                    throw new HubException(Reason.BAD_FILE,
                            "The file server keeps refusing the range of " + file.path());
                }
                continue;
            }
            if (status == 429 || status >= 500) {
                close(answer);
                if (++failures > retries) {
                    throw refusal(status, "", "", name, revision, file.path());
                }
                pause(failures, answer.headers().firstValue("Retry-After").orElse(null));
                continue;
            }
            if (status != 200 && status != 206) {
                close(answer);
                throw refusal(status, answer.headers().firstValue("X-Error-Code").orElse(""),
                        answer.headers().firstValue("X-Error-Message").orElse(""), name, revision, file.path());
            }
            if (status == 206 && rangeStart(answer) != have) {
                close(answer);
                delete(part); // a range other than the one asked for: start again from the beginning
                if (++failures > retries) {
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
                if (failures > retries) {
                    throw new HubException(Reason.UNREACHABLE, "The download of " + file.path() + " from "
                            + resolve.getHost() + " keeps breaking off at " + after + " of " + file.size() + " bytes");
                }
                pause(Math.max(1, failures), null);
            }
        }
    }

    /** Streams the body to the file; returns the bytes the file holds after. A broken connection just ends it. */
    private long copy(HttpResponse<InputStream> answer, Path part, boolean append, long from, Transfer transfer,
            LongConsumer written) {
        long have = from;
        long stall = Math.max(1, readTimeout.toMillis());
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
                answer = http.send(request(at, from), HttpResponse.BodyHandlers.ofInputStream());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CancellationException("interrupted");
            }
            answer.headers().firstValue("X-Linked-Etag").map(HubClient::etag).filter(e -> SHA256.matcher(e).matches())
                    .ifPresent(sha -> transfer.linkedSha256 = sha);
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
        String range = answer.headers().firstValue("Content-Range").orElse("");
        Matcher m = Pattern.compile("bytes\\s+(\\d+)-").matcher(range);
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
