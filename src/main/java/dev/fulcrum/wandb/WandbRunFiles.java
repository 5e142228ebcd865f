package dev.fulcrum.wandb;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.runs.RunFiles;
import dev.fulcrum.runs.RunFiles.RunFile;
import dev.fulcrum.runs.RunFiles.RunRef;
import dev.fulcrum.wandb.WandbNodes.RunNode;

import graphql.schema.DataFetchingEnvironment;
import graphql.schema.idl.RuntimeWiring;

/**
 * A run's files through the W&B protocol, onto the runs store's files ({@link RunFiles}): {@code createRunFiles}
 * answers signed upload URLs (signed as artifact files' are, by {@link WandbArtifacts#check}'s key), the SDK PUTs each
 * file there, and {@code run.files()} lists them with signed download URLs. Rights are the runs API's: members write,
 * viewers read; a URL's signature stands for them (the SDK sends no credentials to upload and download URLs).
 */
@ApplicationScoped
class WandbRunFiles {

    private static final int DEFAULT_PAGE = 50;

    @Inject
    RunFiles files;

    @Inject
    SecretCipher cipher;

    @Inject
    WandbArtifacts artifacts;

    RuntimeWiring.Builder wire(RuntimeWiring.Builder wiring) {
        return wiring
                .type("Mutation",
                        type -> type.dataFetcher("createRunFiles", this::createRunFiles)
                                .dataFetcher("markRunFilesUploaded", this::markRunFilesUploaded))
                .type("Run", type -> type.dataFetcher("fileCount", env -> {
                    RunNode node = env.getSource();
                    return files.list(ref(node), List.of(), null, 1).total();
                }).dataFetcher("files", this::runFiles)).type("File", type -> type.dataFetcher("url", env -> {
                    if (Boolean.TRUE.equals(env.getArgument("upload"))) {
                        throw ApiException.invalid(Violation.of("Upload URLs of listed files are not offered",
                                "value_error", "query", "upload"));
                    }
                    Object source = env.getSource();
                    return source instanceof Map<?, ?> map ? map.get("url") : null;
                }));
    }

    private RunRef ref(RunNode node) {
        return files.run(node.run.entity(), node.run.project(), node.run.name(), Role.VIEWER);
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> createRunFiles(DataFetchingEnvironment env) {
        Map<String, Object> input = env.getArgument("input");
        RunRef run = files.run((String) input.get("entityName"), (String) input.get("projectName"),
                (String) input.get("runName"), Role.MEMBER);
        List<String> names = (List<String>) input.get("files");
        List<Map<String, Object>> nodes = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            String name = RunFiles.checkName(names.get(i), "body", "files", i);
            Map<String, Object> node = new HashMap<>();
            node.put("id", WandbNodes.opaque("File", run.id() + ":" + name));
            node.put("name", name);
            node.put("uploadUrl", url(base(env), "PUT", run.id(), name));
            node.put("directUrl", url(base(env), "GET", run.id(), name));
            node.put("uploadHeaders", List.of());
            nodes.add(node);
        }
        Map<String, Object> payload = new HashMap<>();
        payload.put("runID", WandbNodes.opaque("Run", Long.toString(run.id())));
        payload.put("uploadHeaders", List.of());
        payload.put("files", nodes);
        payload.put("clientMutationId", input.get("clientMutationId"));
        return payload;
    }

    private Map<String, Object> markRunFilesUploaded(DataFetchingEnvironment env) {
        Map<String, Object> input = env.getArgument("input");
        files.run((String) input.get("entityName"), (String) input.get("projectName"), (String) input.get("runName"),
                Role.MEMBER);
        Map<String, Object> payload = new HashMap<>();
        payload.put("success", true);
        payload.put("clientMutationId", input.get("clientMutationId"));
        return payload;
    }

    private Map<String, Object> runFiles(DataFetchingEnvironment env) {
        RunNode node = env.getSource();
        RunRef run = ref(node);
        List<String> names = env.getArgument("names");
        String pattern = env.getArgument("pattern");
        String after = env.getArgument("after");
        Integer first = env.getArgument("first");
        int size = first == null ? DEFAULT_PAGE : first;
        if (size < 1 || size > 1000) {
            throw ApiException.invalid(Violation.of("Must be 1 to 1000", "less_than_equal", "query", "first"));
        }
        List<RunFile> page;
        boolean more;
        if (pattern == null) {
            RunFiles.Page found = files.list(run, names, after == null || after.isEmpty() ? null : after, size);
            page = found.items();
            more = found.nextAfter() != null;
        } else {
            Pattern like = like(pattern);
            List<RunFile> matching = files.list(run, names, null, 1000).items().stream()
                    .filter(file -> like.matcher(file.name()).matches()
                            && (after == null || after.isEmpty() || file.name().compareTo(after) > 0))
                    .toList();
            page = matching.stream().limit(size).toList();
            more = matching.size() > size;
        }
        List<Map<String, Object>> edges = new ArrayList<>();
        for (RunFile file : page) {
            String download = url(base(env), "GET", run.id(), file.name());
            Map<String, Object> fileNode = new HashMap<>();
            fileNode.put("id", WandbNodes.opaque("File", run.id() + ":" + file.name()));
            fileNode.put("name", file.name());
            fileNode.put("url", download);
            fileNode.put("directUrl", download);
            fileNode.put("sizeBytes", file.size());
            fileNode.put("mimetype", file.contentType());
            fileNode.put("updatedAt", file.updatedAt().toString());
            fileNode.put("md5", file.md5());
            fileNode.put("uploadHeaders", List.of());
            edges.add(Map.of("node", fileNode, "cursor", file.name()));
        }
        Map<String, Object> pageInfo = new HashMap<>();
        pageInfo.put("hasNextPage", more);
        pageInfo.put("endCursor", page.isEmpty() ? after : page.get(page.size() - 1).name());
        return Map.of("pageInfo", pageInfo, "edges", edges);
    }

    /** A SQL LIKE pattern ({@code %} any run of characters, {@code _} one, {@code \} escapes) as a regex. */
    static Pattern like(String pattern) {
        StringBuilder regex = new StringBuilder();
        for (int i = 0; i < pattern.length(); i++) {
            char c = pattern.charAt(i);
            if (c == '\\' && i + 1 < pattern.length()) {
                regex.append(Pattern.quote(String.valueOf(pattern.charAt(++i))));
            } else if (c == '%') {
                regex.append(".*");
            } else if (c == '_') {
                regex.append('.');
            } else {
                regex.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile(regex.toString(), Pattern.DOTALL);
    }

    // signed URLs --------------------------------------------------------------------------------------------------

    /** The message a run file's URL signs: the method, the run and the name (distinct from artifact files'). */
    static String message(String method, long runId, String name) {
        return method + " run file " + runId + " " + name;
    }

    String url(String base, String method, long runId, String name) {
        long expires = Instant.now().getEpochSecond() + WandbArtifacts.URL_SECONDS;
        return base + "wandb/run-files/" + runId + "/files?name=" + encode(name) + "&expires=" + expires + "&signature="
                + cipher.sign(WandbArtifacts.SIGNING, message(method, runId, name) + " " + expires);
    }

    /** 403 unless the URL is this server's for the method, run and name and has not expired. */
    void check(String method, long runId, String name, Long expires, String signature) {
        artifacts.check(message(method, runId, name), expires == null ? 0 : expires, signature);
    }

    private static String base(DataFetchingEnvironment env) {
        return env.getGraphQlContext().get(WandbArtifactFetchers.BASE_URL);
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20").replace("%2F", "/");
    }
}
