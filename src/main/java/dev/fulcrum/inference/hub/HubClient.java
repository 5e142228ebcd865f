package dev.fulcrum.inference.hub;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.inference.hub.HubException.Reason;

/**
 * The Hugging Face Hub's listing, as {@code huggingface_hub} speaks it: a revision's commit
 * ({@code /api/models/{repo}/revision/{revision}}) and the files at that commit
 * ({@code /api/models/{repo}/tree/{commit}}, recursive, following the {@code Link} header's {@code next} pages), from
 * which {@link HubFiles} chooses. Blocking: it runs on the request's worker thread or a pull's own, never on an event
 * loop. A request that fails for a dropped connection, a 429 or a 5xx is retried with back-off.
 */
final class HubClient {

    private static final Pattern NEXT = Pattern.compile("<([^>]+)>\\s*;\\s*rel=\"?next\"?");
    static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");

    private final HubHttp hub;
    private final ObjectMapper json;

    HubClient(HubHttp hub, ObjectMapper json) {
        this.hub = hub;
        this.json = json;
    }

    /** The commit of {@code revision} and the files chosen by the name's tag. */
    HubPlan plan(HubName name, String revision) {
        URI endpoint = hub.endpoint();
        JsonNode info = getJson(
                URI.create(endpoint + "/api/models/" + name.repo() + "/revision/" + HubHttp.segment(revision)), name,
                revision);
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
            for (JsonNode entry : parse(answer.body(), page)) {
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

    private static URI next(URI page, String link) {
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
                answer = hub.client().send(hub.request(uri, -1), HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                if (attempt > hub.retries()) {
                    throw hub.unreachable(e);
                }
                hub.pause(attempt, null);
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CancellationException("interrupted");
            }
            int status = answer.statusCode();
            if (status == 200) {
                return answer;
            }
            if ((status == 429 || status >= 500) && attempt <= hub.retries()) {
                hub.pause(attempt, answer.headers().firstValue("Retry-After").orElse(null));
                continue;
            }
            throw hub.refusal(status, answer.headers().firstValue("X-Error-Code").orElse(""),
                    answer.headers().firstValue("X-Error-Message").orElse(""), name, revision, null);
        }
    }
}
