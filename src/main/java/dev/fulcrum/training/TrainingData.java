package dev.fulcrum.training;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.datasets.DatasetService;
import dev.fulcrum.datasets.DatasetVersion;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * Reads and checks SFT examples from {@code wandb-artifact:///e/p/name:version} ({@code train.jsonl}, one
 * {@code {"messages": [...]}} per line) or {@code weave:///e/p/object/dataset:digest} (dataset rows with
 * {@code messages}). The examples are copied into the job, so later changes of the source do not change the job.
 */
@ApplicationScoped
public class TrainingData {

    static final String TRAIN_FILE = "train.jsonl";
    private static final Pattern ARTIFACT = Pattern.compile("wandb-artifact:///([^/]+)/([^/]+)/([^/:]+):([^/:]+)");
    private static final Pattern DATASET = Pattern.compile("weave:///([^/]+)/([^/]+)/object/([^/:]+):([^/:]+)");
    private static final Pattern VERSION_INDEX = Pattern.compile("v(\\d{1,9})");

    @Inject
    ArtifactVersions artifacts;

    @Inject
    BlobStore blobs;

    @Inject
    DatasetService datasets;

    @Inject
    Access access;

    @Inject
    ObjectMapper json;

    @Inject
    TrainingSettings settings;

    /** The examples as {@code [{"messages": [{"role", "content"}]}]}; 422 naming the first bad lines. */
    public ArrayNode read(String url) {
        Matcher artifact = ARTIFACT.matcher(url);
        if (artifact.matches()) {
            return fromArtifact(artifact.group(1), artifact.group(2), artifact.group(3), artifact.group(4));
        }
        Matcher dataset = DATASET.matcher(url);
        if (dataset.matches()) {
            return fromDataset(dataset.group(1), dataset.group(2), dataset.group(3), dataset.group(4));
        }
        throw ApiException.invalid(Violation.of(
                "Must be wandb-artifact:///{entity}/{project}/{artifact}:{version} or"
                        + " weave:///{entity}/{project}/object/{dataset}:{digest}",
                "value_error", "body", "training_data_url"));
    }

    private ArrayNode fromArtifact(String entity, String project, String name, String version) {
        FileView file = artifacts.getVersion(entity, project, name, version).files().stream()
                .filter(f -> f.path().equals(TRAIN_FILE)).findFirst().orElseThrow(() -> ApiException.invalid(
                        Violation.of("The artifact has no " + TRAIN_FILE, "value_error", "body", "training_data_url")));
        if (file.size() > settings.maxTrainingDataBytes()) {
            throw ApiException
                    .invalid(Violation.of(TRAIN_FILE + " is larger than " + settings.maxTrainingDataBytes() + " bytes",
                            "value_error", "body", "training_data_url"));
        }
        ArrayNode examples = JsonNodeFactory.instance.arrayNode();
        List<Violation> problems = new ArrayList<>();
        try (InputStream in = blobs.open(file.digest(), 0, file.size());
                BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            int number = 0;
            while ((line = lines.readLine()) != null) {
                number++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode row;
                try {
                    row = json.readTree(line);
                } catch (JsonProcessingException e) {
                    problems.add(Violation.of("Line " + number + " is not JSON", "json_invalid", "training_data",
                            TRAIN_FILE, "line", number));
                    continue;
                }
                example(row, problems, "Line " + number, "training_data", TRAIN_FILE, "line", number)
                        .ifPresent(examples::add);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return checked(examples, problems);
    }

    private ArrayNode fromDataset(String entity, String project, String objectId, String digest) {
        ProjectRef ref = access.readableProject(entity, project);
        DatasetVersion version;
        Matcher index = VERSION_INDEX.matcher(digest);
        if (digest.equals("latest")) {
            version = DatasetVersion
                    .find("projectId = ?1 and objectId = ?2 and deletedAt is null order by versionIndex" + " desc",
                            ref.projectId(), objectId)
                    .firstResult();
        } else if (index.matches()) {
            version = DatasetVersion
                    .find("projectId = ?1 and objectId = ?2 and versionIndex = ?3 and deletedAt is null",
                            ref.projectId(), objectId, Integer.parseInt(index.group(1)))
                    .firstResult();
        } else {
            version = DatasetVersion.find("projectId = ?1 and objectId = ?2 and digest = ?3 and deletedAt is null",
                    ref.projectId(), objectId, digest).firstResult();
        }
        if (version == null) {
            throw ApiException
                    .notFound("Dataset " + entity + "/" + project + "/" + objectId + ":" + digest + " not found");
        }
        ArrayNode examples = JsonNodeFactory.instance.arrayNode();
        List<Violation> problems = new ArrayList<>();
        int[] number = { 0 };
        datasets.forEachRow(version.tableDigest, 0, null, row -> {
            int at = number[0]++;
            try {
                example(json.readTree(row.json()), problems, "Row " + at, "training_data", "row", at)
                        .ifPresent(examples::add);
            } catch (JsonProcessingException e) {
                throw new UncheckedIOException(e);
            }
        });
        return checked(examples, problems);
    }

    private static ArrayNode checked(ArrayNode examples, List<Violation> problems) {
        if (!problems.isEmpty()) {
            throw ApiException.invalid(problems.size() > 20 ? problems.subList(0, 20) : problems);
        }
        if (examples.isEmpty()) {
            throw ApiException.invalid(
                    Violation.of("The training data has no examples", "too_short", "body", "training_data_url"));
        }
        return examples;
    }

    /** The example reduced to its messages, or absent after recording why it is bad. */
    private static java.util.Optional<ObjectNode> example(JsonNode row, List<Violation> problems, String where,
            Object... loc) {
        JsonNode messages = row == null ? null : row.get("messages");
        if (messages == null || !messages.isArray() || messages.isEmpty()) {
            problems.add(Violation.of(where + ": messages must be a non-empty list", "list_type", loc));
            return java.util.Optional.empty();
        }
        ObjectNode example = JsonNodeFactory.instance.objectNode();
        ArrayNode kept = example.putArray("messages");
        boolean assistant = false;
        for (int m = 0; m < messages.size(); m++) {
            JsonNode message = messages.get(m);
            String role = message.path("role").asText(null);
            if (role == null || !Trajectories.ROLES.contains(role)) {
                problems.add(Violation.of(where + ", message " + m + ": role must be one of " + Trajectories.ROLES,
                        "enum", loc));
                return java.util.Optional.empty();
            }
            String content = Trajectories.text(message.get("content"));
            if (content == null) {
                content = message.has("tool_calls") ? message.get("tool_calls").toString() : null;
            }
            if (content == null) {
                problems.add(Violation.of(where + ", message " + m + ": content must be text", "string_type", loc));
                return java.util.Optional.empty();
            }
            kept.addObject().put("role", role).put("content", content);
            assistant |= role.equals("assistant");
        }
        if (!assistant) {
            problems.add(Violation.of(where + ": no assistant message to learn", "value_error", loc));
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(example);
    }
}
