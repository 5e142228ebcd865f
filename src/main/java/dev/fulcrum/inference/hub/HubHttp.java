package dev.fulcrum.inference.hub;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import dev.fulcrum.inference.hub.HubException.Reason;
import dev.fulcrum.platform.http.OutboundHttp;

/**
 * What the Hub's listing ({@link HubClient}) and downloads ({@link HubDownloads}) share: the address, the token (sent
 * only to the Hub's own origin, never to the file server it redirects to), the blocking HTTP client, the back-off
 * between retries and the Hub's refusals in words ({@code X-Error-Code} as {@code huggingface_hub} reads it).
 */
final class HubHttp {

    private final URI endpoint;
    private final String token;
    private final Duration readTimeout;
    private final int retries;
    private final Duration retryDelay;
    private final Duration maxRetryDelay;
    private final HttpClient http;
    private final ExecutorService threads;

    HubHttp(String endpoint, String token, Duration connectTimeout, Duration readTimeout, int retries,
            Duration retryDelay, Duration maxRetryDelay) {
        this.endpoint = URI.create(endpoint.endsWith("/") ? endpoint.substring(0, endpoint.length() - 1) : endpoint);
        this.token = token == null || token.isBlank() ? null : token.strip();
        this.readTimeout = readTimeout;
        this.retries = retries;
        this.retryDelay = retryDelay;
        this.maxRetryDelay = maxRetryDelay;
        this.threads = Executors.newCachedThreadPool(r -> {
            Thread thread = new Thread(r, "model-pull-http");
            thread.setDaemon(true);
            return thread;
        });
        this.http = OutboundHttp.blocking(connectTimeout, threads);
    }

    URI endpoint() {
        return endpoint;
    }

    HttpClient client() {
        return http;
    }

    Duration readTimeout() {
        return readTimeout;
    }

    /** Attempts after the first of a request that failed for a dropped connection, a 429 or a 5xx. */
    int retries() {
        return retries;
    }

    void close() {
        threads.shutdownNow();
    }

    /** A GET, from byte {@code from} when positive; the token only for the Hub's own origin. */
    HttpRequest request(URI uri, long from) {
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

    /** Waits before attempt {@code attempt + 1}: the back-off doubled each time, or the server's Retry-After. */
    void pause(int attempt, String retryAfter) {
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

    HubException unreachable(IOException e) {
        return new HubException(Reason.UNREACHABLE,
                "The Hub cannot be reached at " + endpoint + " (" + e.getClass().getSimpleName()
                        + (e.getMessage() == null ? "" : ": " + e.getMessage()) + "); set HF_ENDPOINT or "
                        + "fulcrum.inference.hub.endpoint for a mirror",
                e);
    }

    /** What an answer other than 200 means, in words (the Hub's {@code X-Error-Code} as huggingface_hub reads it). */
    HubException refusal(int status, String code, String message, HubName name, String revision, String file) {
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
    static String segment(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A repository path with each segment percent-encoded. */
    static String path(String path) {
        StringBuilder encoded = new StringBuilder();
        for (String part : path.split("/")) {
            if (!encoded.isEmpty()) {
                encoded.append('/');
            }
            encoded.append(segment(part));
        }
        return encoded.toString();
    }
}
