package dev.fulcrum.datasets;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Names;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * Weave's ref reads ({@code /refs/read_batch}) and table statistics ({@code /table/query_stats_batch}): a ref names an
 * object version and a path into its value, through the refs on the way (other objects, a table's rows by digest).
 */
@ApplicationScoped
public class WeaveRefs {

    /** An object or op ref with its path of {@code /edge/value} pairs (the contract's pattern). */
    private static final Pattern OBJECT_REF = Pattern
            .compile("weave:///(" + Names.regex(Names.ENTITY_MAX) + ")/(" + Names.regex(Names.NAME_MAX)
                    + ")/(?:object|op)/([A-Za-z0-9_.-]{1,128}):(latest|v[0-9]{1,9}|[A-Za-z0-9]{43})"
                    + "((?:/(?:attr|key|index|id)/[^/]+)*)");

    private static final Pattern TABLE_REF = Pattern.compile("weave:///([^/]+)/([^/]+)/table/([0-9a-f]{64})");

    /** A value may name another ref, which may name another: at most this many are followed for one ref. */
    private static final int MAX_FOLLOWED = 64;

    static final String REF_RULE = "Must be a ref 'weave:///entity/project/object/name:version', optionally followed"
            + " by '/attr/<name>', '/key/<key>', '/index/<n>' or '/id/<row digest>' pairs";

    @Inject
    Access access;

    @Inject
    DatasetStatements statements;

    @Inject
    WeaveObjects objects;

    @Inject
    DatasetService datasets;

    @Inject
    ObjectMapper json;

    /** A table's statistics; {@code storageBytes} only when asked for. */
    public record TableStats(String digest, int count, Long storageBytes) {
    }

    /** The value of each ref, in order; a ref to nothing is a 404 naming it. */
    @Transactional
    public List<JsonNode> read(List<String> refs) {
        List<JsonNode> vals = new ArrayList<>(refs.size());
        for (int i = 0; i < refs.size(); i++) {
            vals.add(resolve(refs.get(i), new int[] { 0 }, "body", "refs", i));
        }
        return vals;
    }

    private JsonNode resolve(String ref, int[] followed, Object... loc) {
        Matcher m = OBJECT_REF.matcher(ref);
        if (!m.matches()) {
            throw ApiException.invalid(Violation.of(REF_RULE, "string_pattern_mismatch", loc));
        }
        WeaveObjects.ProjectName name = WeaveObjects.projectName(m.group(1) + "/" + m.group(2), loc);
        if (!DatasetService.usableObjectId(m.group(3))) {
            // "." and "..": no object can have them
            throw ApiException.notFound("Ref " + ref + ": no object " + m.group(3));
        }
        WeaveObjects.Found found = objects.read(name, m.group(3), m.group(4));
        JsonNode val = WeaveObjects.val(found.version(), name.entity(), name.project(), json);
        String[] path = m.group(5).isEmpty() ? new String[0] : m.group(5).substring(1).split("/");
        for (int i = 0; i < path.length; i += 2) {
            String edge = path[i];
            String key = decoded(path[i + 1]);
            if (val.isTextual() && OBJECT_REF.matcher(val.textValue()).matches()) {
                if (++followed[0] > MAX_FOLLOWED) {
                    throw ApiException
                            .invalid(Violation.of("More than " + MAX_FOLLOWED + " refs followed", "value_error", loc));
                }
                val = resolve(val.textValue(), followed, loc);
            }
            JsonNode next = key == null ? null : switch (edge) {
                case "attr", "key" -> val.isObject() ? val.get(key) : null;
                case "index" -> val.isArray() && key.matches("[0-9]{1,9}") ? val.get(Integer.parseInt(key)) : null;
                default -> row(val, key, loc);
            };
            if (next == null) {
                throw ApiException.notFound("Ref " + ref + ": nothing at /" + edge + "/" + path[i + 1]);
            }
            val = next;
        }
        return val;
    }

    /**
     * A percent-encoded value of a ref's path ({@code +} is itself, as Python's {@code quote} leaves it); null if
     * malformed.
     */
    private static String decoded(String value) {
        try {
            return URLDecoder.decode(value.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The row of digest {@code key} of the table {@code val} names (a table of a project the caller may read). */
    private JsonNode row(JsonNode val, String key, Object... loc) {
        Matcher table = val.isTextual() ? TABLE_REF.matcher(val.textValue()) : null;
        if (table == null || !table.matches()) {
            return null;
        }
        WeaveObjects.ProjectName name = WeaveObjects.projectName(table.group(1) + "/" + table.group(2), loc);
        datasets.requireTable(name.entity(), name.project(), table.group(3), loc);
        return statements.rowValue(table.group(3), key).map(this::parse).orElse(null);
    }

    private JsonNode parse(String text) {
        try {
            return json.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A stored row is not JSON", e);
        }
    }

    /**
     * The statistics of the named tables the project may read, in the order named and once each; the others are left
     * out.
     */
    @Transactional
    public List<TableStats> tableStats(WeaveObjects.ProjectName name, List<String> digests, boolean storage) {
        ProjectRef ref = access.readableProject(name.entity(), name.project());
        if (digests == null || digests.isEmpty()) {
            return List.of();
        }
        List<String> wanted = new ArrayList<>(new LinkedHashSet<>(digests));
        List<TableStats> found = new ArrayList<>(statements.tableStats(ref.projectId(), wanted, storage));
        found.sort(java.util.Comparator.comparingInt(t -> wanted.indexOf(t.digest())));
        return found;
    }
}
