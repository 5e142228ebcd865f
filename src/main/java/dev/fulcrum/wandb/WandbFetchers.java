package dev.fulcrum.wandb;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.runs.RunMedia;
import dev.fulcrum.runs.RunService;
import dev.fulcrum.runs.RunService.RunChanges;
import dev.fulcrum.runs.RunService.Upserted;
import dev.fulcrum.runs.RunStreams;
import dev.fulcrum.runs.RunStreams.Tails;
import dev.fulcrum.wandb.WandbNodes.EntityNode;
import dev.fulcrum.wandb.WandbNodes.ProjectNode;
import dev.fulcrum.wandb.WandbNodes.RunNode;
import dev.fulcrum.wandb.WandbNodes.ServerInfoNode;

import graphql.schema.DataFetcher;
import graphql.schema.DataFetchingEnvironment;
import graphql.schema.idl.RuntimeWiring;

/**
 * What each field of {@code wandb.graphql} reads or does: every one a call of the accounts or runs services, so the
 * GraphQL door is authorized exactly as the REST API is (viewers read, members write, a member's first write creates
 * the project).
 */
@ApplicationScoped
class WandbFetchers {

    @Inject
    Access access;

    @Inject
    WandbAccounts accounts;

    @Inject
    RunService runs;

    @Inject
    RunMedia runMedia;

    @Inject
    RunStreams streams;

    @Inject
    WandbRegistries registries;

    @Inject
    WandbRunLists runLists;

    RuntimeWiring.Builder wire(RuntimeWiring.Builder wiring) {
        return wiring.type("Query", type -> type.dataFetcher("viewer", env -> accounts.viewer())
                // the optional W&B server features offered (the SDK asks before it sends an automation)
                .dataFetcher("serverInfo", env -> new ServerInfoNode(WandbAutomations.FEATURES))
                .dataFetcher("model", this::project).dataFetcher("project", this::project)
                .dataFetcher("entity", env -> {
                    String name = entityName(env.getArgument("name"));
                    return WandbRegistries.ORG_ENTITY.equals(name) ? WandbRegistries.orgEntity()
                            : accounts.entity(name);
                }))
                .type("Mutation",
                        type -> type
                                .dataFetcher("upsertModel", this::upsertModel).dataFetcher("upsertBucket",
                                        this::upsertBucket))
                .type("User",
                        type -> type
                                .dataFetcher("teams",
                                        env -> Map.of("edges",
                                                accounts.teams().stream().map(team -> Map.of("node", team)).toList()))
                                .dataFetcher("organizations", env -> List.of(WandbRegistries.organization())))
                .type("Entity", type -> type.dataFetcher("project", env -> {
                    EntityNode entity = env.getSource();
                    return project(entity.name(), env.getArgument("name"));
                }).dataFetcher("organization", env -> WandbRegistries.organization()).dataFetcher("user", env -> {
                    EntityNode entity = env.getSource();
                    return entity.isTeam() ? null : accounts.user(entity.name());
                })).type("Project", type -> type.dataFetcher("entity", env -> {
                    ProjectNode project = env.getSource();
                    return project.registry() != null ? WandbRegistries.orgEntity()
                            : accounts.entity(project.entityName());
                }).dataFetcher("description", env -> {
                    ProjectNode project = env.getSource();
                    return project.registry() != null ? null
                            : dev.fulcrum.accounts.Project.<dev.fulcrum.accounts.Project> findByIdOptional(
                                    project.ref().projectId()).map(p -> p.description).orElse(null);
                }).dataFetcher("bucket", env -> run(env, Boolean.TRUE.equals(env.getArgument("missingOk"))))
                        .dataFetcher("run", env -> run(env, true)))
                .type("Run", type -> type.dataFetcher("id", run(node -> node.id))
                        .dataFetcher("name", run(node -> node.run.name()))
                        .dataFetcher("displayName", run(node -> node.run.displayName()))
                        .dataFetcher("notes", run(node -> node.run.notes()))
                        .dataFetcher("state", run(node -> node.run.state()))
                        .dataFetcher("tags", run(node -> node.run.tags()))
                        .dataFetcher("config", run(node -> SdkJson.write(SdkJson.wrapConfig(node.run.config()))))
                        .dataFetcher("wandbConfig", this::wandbConfig)
                        .dataFetcher("summaryMetrics", run(node -> SdkJson.write(node.run.summary())))
                        .dataFetcher("historyLineCount", run(node -> node.run.historyRows()))
                        .dataFetcher("historyTail",
                                run(node -> tail(tails(node).lastHistoryRow() == null ? null
                                        : SdkJson.write(tails(node).lastHistoryRow()))))
                        .dataFetcher("eventsLineCount", run(node -> tails(node).systemMetricsLines()))
                        .dataFetcher("eventsTail", run(node -> tail(tails(node).lastSystemMetrics())))
                        .dataFetcher("logLineCount", run(node -> tails(node).outputLines()))
                        .dataFetcher("project", run(node -> project(node.run.entity(), node.run.project())))
                        .dataFetcher("projectId", run(node -> projectOf(node).projectId()))
                        .dataFetcher("readOnly", run(node -> !projectOf(node).writable()))
                        .dataFetcher("user",
                                run(node -> node.run.createdBy() == null ? null : accounts.user(node.run.createdBy())))
                        .dataFetcher("systemMetrics",
                                run(node -> tails(node).lastSystemMetrics() == null ? "{}"
                                        : tails(node).lastSystemMetrics()))
                        .dataFetcher("historyKeys", run(this::historyKeys)).dataFetcher("history", this::history)
                        .dataFetcher("sampledHistory", this::sampledHistory)
                        .dataFetcher("createdAt", run(node -> node.run.createdAt().toString()))
                        .dataFetcher("heartbeatAt", run(node -> node.run.updatedAt().toString())));
    }

    private ProjectRef projectOf(RunNode node) {
        return access.readableProject(node.run.entity(), node.run.project());
    }

    /** W&B's summary of a run's history: its last step and, per key, how many rows hold a number there. */
    private Map<String, Object> historyKeys(RunNode node) {
        Map<String, Object> keys = new TreeMap<>();
        streams.historyKeys(node.run.entity(), node.run.project(), node.run.name()).forEach(
                (key, count) -> keys.put(key, Map.of("typeCounts", List.of(Map.of("type", "number", "count", count)))));
        return Map.of("lastStep", node.run.lastStep(), "keys", keys);
    }

    private List<String> history(DataFetchingEnvironment env) {
        RunNode node = env.getSource();
        Number min = env.getArgument("minStep");
        Number max = env.getArgument("maxStep");
        int samples = samples(env.getArgument("samples"));
        List<ObjectNode> rows = min == null && max == null ? sample(rows(node, null), samples)
                : runLists.between(node, min, max, null, samples);
        // the rows' media values (images, tables, histograms...), kept beside their numbers
        Map<Long, ObjectNode> media = runMedia.byStep(node.run.entity(), node.run.project(), node.run.name());
        if (!media.isEmpty()) {
            rows.forEach(row -> {
                ObjectNode values = media.get(row.path("_step").asLong());
                if (values != null) {
                    row.setAll(values);
                }
            });
        }
        return rows.stream().map(SdkJson::write).toList();
    }

    private List<List<ObjectNode>> sampledHistory(DataFetchingEnvironment env) {
        RunNode node = env.getSource();
        List<String> specs = env.getArgument("specs");
        List<List<ObjectNode>> answers = new ArrayList<>();
        for (String text : specs) {
            ObjectNode spec = SdkJson.object(text, "specs");
            List<String> keys = new ArrayList<>();
            spec.path("keys").forEach(key -> keys.add(key.asText()));
            Number samples = spec.path("samples").isNumber() ? spec.get("samples").numberValue() : null;
            if (spec.has("minStep") || spec.has("maxStep")) {
                // the scan of wandb-core (scan_history(keys=...)): rows holding every key, steps minStep to maxStep
                // (both included: the SDK asks steps 10 to 19 of a page [10, 20) with 10 samples)
                Number last = step(spec, "maxStep");
                answers.add(runLists.between(node, step(spec, "minStep"),
                        last == null || last.longValue() == Long.MAX_VALUE ? null : last.longValue() + 1, keys,
                        samples(samples)));
                continue;
            }
            answers.add(sample(rows(node, keys.isEmpty() ? null : String.join(",", keys)), samples(samples)));
        }
        return answers;
    }

    private static Number step(ObjectNode spec, String name) {
        if (!spec.has(name)) {
            return null;
        }
        if (!spec.get(name).canConvertToLong()) {
            throw ApiException.invalid(Violation.of("Must be an integer", "int_type", "query", "specs", name));
        }
        return spec.get(name).longValue();
    }

    /** Every history row of the run (holding any of the keys, reduced to them), page by page from the runs service. */
    private List<ObjectNode> rows(RunNode node, String keys) {
        List<ObjectNode> rows = new ArrayList<>();
        Integer offset = 0;
        while (offset != null) {
            RunService.Page<ObjectNode> page = runs.history(node.run.entity(), node.run.project(), node.run.name(),
                    keys == null ? null : List.of(keys), MAX_PAGE, offset);
            rows.addAll(page.items());
            offset = page.nextOffset();
        }
        return rows;
    }

    private static final int MAX_PAGE = 10_000;
    private static final int MAX_SAMPLES = 100_000;

    private static int samples(Number given) {
        int samples = given == null ? 500 : given.intValue();
        if (samples < 1 || samples > MAX_SAMPLES) {
            throw ApiException
                    .invalid(Violation.of("Must be 1 to " + MAX_SAMPLES, "less_than_equal", "query", "samples"));
        }
        return samples;
    }

    /** At most {@code samples} rows, evenly spaced, the first and the last included. */
    static <T> List<T> sample(List<T> rows, int samples) {
        if (rows.size() <= samples) {
            return rows;
        }
        List<T> kept = new ArrayList<>(samples);
        for (int i = 0; i < samples; i++) {
            kept.add(rows.get(
                    samples == 1 ? rows.size() - 1 : (int) Math.round((double) i * (rows.size() - 1) / (samples - 1))));
        }
        return kept;
    }

    private interface RunField {
        Object read(RunNode node);
    }

    private static DataFetcher<Object> run(RunField field) {
        return env -> field.read(env.getSource());
    }

    private Tails tails(RunNode node) {
        return node.tails(() -> streams.tails(node.run.entity(), node.run.project(), node.run.name()));
    }

    /** A JSON array holding the line as its one string, or empty: W&B's form of a file's last line. */
    private static String tail(String line) {
        ArrayNode lines = JsonNodeFactory.instance.arrayNode();
        if (line != null) {
            lines.add(line);
        }
        return SdkJson.write(lines);
    }

    /** The asked keys of the config's {@code _wandb} value (the SDK's own settings, such as its telemetry). */
    private Object wandbConfig(DataFetchingEnvironment env) {
        RunNode node = env.getSource();
        List<String> keys = env.getArgument("keys");
        ObjectNode own = node.run.config().path("_wandb").isObject() ? (ObjectNode) node.run.config().get("_wandb")
                : JsonNodeFactory.instance.objectNode();
        ObjectNode kept = JsonNodeFactory.instance.objectNode();
        own.fields().forEachRemaining(field -> {
            if (keys == null || keys.contains(field.getKey())) {
                kept.set(field.getKey(), field.getValue());
            }
        });
        return SdkJson.write(kept);
    }

    private ProjectNode project(DataFetchingEnvironment env) {
        return project(entityName(env.getArgument("entityName")), env.getArgument("name"));
    }

    /** A project the caller may read, or null when the entity has none of that name. */
    private ProjectNode project(String entity, String name) {
        if (name == null) {
            throw ApiException.invalid(Violation.of("A project name is required", "missing", "query", "name"));
        }
        if (WandbRegistries.ORG_ENTITY.equals(entity)) {
            return registries.project(name);
        }
        return access.existingProject(entity, name, Role.VIEWER).map(ProjectNode::of).orElse(null);
    }

    private RunNode run(DataFetchingEnvironment env, boolean missingOk) {
        ProjectNode project = env.getSource();
        String name = env.getArgument("name");
        try {
            return new RunNode(runs.get(project.entityName(), project.name(), name));
        } catch (ApiException e) {
            if (missingOk && e.kind() == ApiException.Kind.NOT_FOUND) {
                return null;
            }
            throw e;
        }
    }

    private String entityName(String given) {
        return given == null || given.isEmpty() ? accounts.defaultEntity() : given;
    }

    private Map<String, Object> upsertModel(DataFetchingEnvironment env) {
        Map<String, Object> input = env.getArgument("input");
        String entity = entityName((String) input.get("entityName"));
        String name = (String) input.get("name");
        if (name == null) {
            throw ApiException.invalid(Violation.of("A project name is required", "missing", "body", "name"));
        }
        Optional<ProjectRef> existing = access.existingProject(entity, name, Role.MEMBER);
        ProjectNode project = ProjectNode.of(existing.orElseGet(() -> access.writableProject(entity, name)));
        Map<String, Object> payload = new HashMap<>();
        payload.put("project", project);
        payload.put("model", project);
        payload.put("inserted", existing.isEmpty());
        return payload;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> upsertBucket(DataFetchingEnvironment env) {
        Map<String, Object> input = env.getArgument("input");
        String name = (String) input.get("name");
        String project = (String) input.get("modelName");
        String entity = (String) input.get("entityName");
        String[] stored = input.get("id") == null ? null : WandbNodes.parseRunId((String) input.get("id"));
        if (stored != null) {
            name = name == null ? stored[0] : name;
            project = project == null ? stored[1] : project;
            entity = entity == null ? stored[2] : entity;
        }
        if (project == null) {
            throw ApiException.invalid(Violation.of("A project name is required", "missing", "body", "modelName"));
        }
        String config = (String) input.get("config");
        String summary = (String) input.get("summaryMetrics");
        List<String> tags = input.get("tags") == null ? null : new ArrayList<>((List<String>) input.get("tags"));
        RunChanges changes = new RunChanges((String) input.get("displayName"),
                config == null ? null : SdkJson.finite(SdkJson.unwrapConfig(SdkJson.object(config, "config"))),
                (String) input.get("state"), tags, (String) input.get("notes"),
                summary == null ? null : SdkJson.finite(SdkJson.object(summary, "summaryMetrics")));
        Upserted upserted = runs.upsert(entityName(entity), project, name, changes);
        Map<String, Object> payload = new HashMap<>();
        payload.put("bucket", new RunNode(upserted.run()));
        payload.put("inserted", upserted.inserted());
        payload.put("updateAvailable", false);
        return payload;
    }
}
