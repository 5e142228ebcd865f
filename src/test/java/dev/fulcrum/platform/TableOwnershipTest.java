package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Every table has one owning package, and only that package's statements name it; the others call its service. What
 * {@code accounts} publishes for joins (the views of {@code V66__access_views.sql} and {@code project_names}) and what
 * {@code artifacts} publishes ({@code artifact_version_projects}) may be joined by any feature. A new table must be
 * given its owner here.
 */
class TableOwnershipTest {

    private static final Path SOURCES = Path.of("src/main/java/dev/fulcrum");
    private static final Path MIGRATIONS = Path.of("src/main/resources/db/migration");

    /** The owner of each table, by package. */
    private static final Map<String, List<String>> OWNERS = Map.ofEntries(
            Map.entry("accounts",
                    List.of("users", "api_keys", "entities", "entity_members", "access_epoch", "console_sessions",
                            "projects", "registries", "registry_members")),
            Map.entry("artifacts",
                    List.of("artifact_aliases", "artifact_collections", "artifact_files", "artifact_tags",
                            "artifact_versions", "blob_md5s", "blob_puts", "registry_links", "registry_link_aliases",
                            "registry_link_tags", "artifact_collection_tags", "registry_collection_tags",
                            "artifact_drafts", "artifact_draft_files", "artifact_multipart_uploads",
                            "artifact_multipart_parts")),
            Map.entry("automations",
                    List.of("automations", "automation_run_firings", "automation_firings",
                            "automation_weave_metric_states", "team_secrets", "webhooks", "webhook_deliveries",
                            "webhook_attempts")),
            Map.entry("datasets",
                    List.of("dataset_rows", "dataset_table_rows", "dataset_tables", "dataset_versions",
                            "project_tables", "weave_files")),
            Map.entry("traces", List.of("weave_calls", "weave_feedback")),
            Map.entry("events", List.of("platform_events")),
            Map.entry("inference",
                    List.of("inference_models", "inference_slot_leases", "inference_token_use", "inference_usage",
                            "model_pulls")),
            Map.entry("tinker",
                    List.of("tinker_checkpoints", "tinker_files", "tinker_models", "tinker_requests", "tinker_samplers",
                            "tinker_sessions")),
            Map.entry("runs", List.of("runs", "run_history", "run_output", "run_system_metrics", "run_files")),
            Map.entry("training",
                    List.of("training_checkpoints", "training_job_events", "training_job_files", "training_jobs",
                            "training_logs", "training_models", "training_workers")),
            Map.entry("wandb", List.of("wandb_artifact_lineage")),
            // backups copies every table out and in, finding them in PostgreSQL's catalog: it names only its own
            Map.entry("backups", List.of("restored_backups")));

    /** The views {@code accounts} and {@code artifacts} publish for other features' statements to join. */
    private static final Set<String> PUBLISHED = Set.of("account_names", "entity_names", "memberships",
            "effective_roles", "project_names", "artifact_version_projects");

    private static final Pattern CREATED = Pattern.compile(
            "create\\s+(?:unlogged\\s+)?table\\s+(?:if\\s+not\\s+exists\\s+)?(\\w+)", Pattern.CASE_INSENSITIVE);
    private static final Pattern RENAMED = Pattern.compile(
            "alter\\s+table\\s+(?:if\\s+exists\\s+)?(\\w+)\\s+rename\\s+to\\s+(\\w+)", Pattern.CASE_INSENSITIVE);
    private static final Pattern DROPPED = Pattern.compile("drop\\s+table\\s+(?:if\\s+exists\\s+)?(\\w+)",
            Pattern.CASE_INSENSITIVE);

    private static Map<String, String> owners() {
        return OWNERS.entrySet().stream().flatMap(e -> e.getValue().stream().map(t -> Map.entry(t, e.getKey())))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
    }

    /** A table named where SQL names one: after from, join, into, update, table or references. */
    static Pattern naming(Set<String> tables) {
        String names = tables.stream().sorted(Comparator.comparing(String::length).reversed())
                .collect(Collectors.joining("|"));
        return Pattern.compile("\\b(?:from|join|into|update|table|references)\\s+(" + names + ")\\b",
                Pattern.CASE_INSENSITIVE);
    }

    private static int version(Path migration) {
        String name = migration.getFileName().toString();
        return Integer.parseInt(name.substring(1, name.indexOf("__")));
    }

    @Test
    void everyTableOfTheMigrationsHasAnOwner() throws IOException {
        Set<String> tables = new TreeSet<>();
        try (Stream<Path> files = Files.list(MIGRATIONS)) {
            // in Flyway's order (V113 after V69), so renames and drops apply to the tables made before them
            for (Path file : files.sorted(Comparator.comparingInt(TableOwnershipTest::version)).toList()) {
                String sql = Files.readString(file);
                Matcher created = CREATED.matcher(sql);
                while (created.find()) {
                    tables.add(created.group(1).toLowerCase(Locale.ROOT));
                }
                Matcher renamed = RENAMED.matcher(sql);
                while (renamed.find()) {
                    tables.remove(renamed.group(1).toLowerCase(Locale.ROOT));
                    tables.add(renamed.group(2).toLowerCase(Locale.ROOT));
                }
                Matcher dropped = DROPPED.matcher(sql);
                while (dropped.find()) {
                    tables.remove(dropped.group(1).toLowerCase(Locale.ROOT));
                }
            }
        }
        assertTrue(tables.size() > 40, "the migrations are read: " + tables);
        tables.removeAll(owners().keySet());
        assertEquals(Set.of(), tables, "give each new table its owning package in OWNERS");
    }

    @Test
    void noPackageNamesAnotherPackagesTable() throws IOException {
        Map<String, String> owners = owners();
        Pattern naming = naming(owners.keySet());
        List<String> found = new ArrayList<>();
        List<Path> sources;
        try (Stream<Path> files = Files.walk(SOURCES)) {
            sources = files.filter(f -> f.toString().endsWith(".java")).sorted().toList();
        }
        for (Path source : sources) {
            String pkg = SOURCES.relativize(source).getName(0).toString();
            Matcher table = naming.matcher(Files.readString(source));
            while (table.find()) {
                String owner = owners.get(table.group(1).toLowerCase(Locale.ROOT));
                if (!owner.equals(pkg)) {
                    found.add(SOURCES.relativize(source) + ": " + table.group() + " (owned by " + owner + ")");
                }
            }
        }
        assertTrue(sources.size() > 200, "the sources are read: " + sources.size());
        assertEquals(List.of(), found, "call the owning package's service, or join a view it publishes " + PUBLISHED);
    }

    @Test
    void theRuleFindsATableNamedInAStatement() {
        Pattern naming = naming(Set.of("run_history", "runs"));
        Matcher m = naming.matcher("select cast(val ->> ?2 as float8) from run_history where run_id = ?1");
        assertTrue(m.find());
        assertEquals("run_history", m.group(1));
        assertTrue(!naming.matcher("join run_files f on f.run_id = r.id").find());
    }
}
