package dev.fulcrum.datasets;

import java.sql.Connection;
import java.sql.SQLException;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.agroal.api.AgroalDataSource;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.AccessChanges;
import dev.fulcrum.accounts.ApiKeys;
import dev.fulcrum.accounts.AuthenticatesInQuery;
import dev.fulcrum.accounts.CurrentCaller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.ApiException;

/**
 * The hot path of the datasets API: reading one version, answered as serialized JSON. An answer given to the same API
 * key for the same path is reused while no access change has arrived (see {@link DatasetReadCache}): that costs no
 * database round trip. Otherwise the API key, the caller's access and the version come from one statement
 * ({@link DatasetStatements#read}), outside any transaction (the resource method is {@link AuthenticatesInQuery}).
 */
@Startup // its meters are on the page from the start
@ApplicationScoped
public class DatasetReads {

    @Inject
    DatasetStatements statements;

    @Inject
    DatasetReadCache cache;

    @Inject
    Access access;

    @Inject
    CurrentCaller current;

    @Inject
    ApiKeys apiKeys;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    AccessChanges changes;

    @Inject
    ObjectMapper json;

    @Inject
    MeterRegistry registry;

    private Counter hits;
    private Counter misses;

    @PostConstruct
    void registerMeters() {
        hits = reads(registry, "hit");
        misses = reads(registry, "miss");
    }

    /** Dataset reads by whether the replica's read cache answered (docs/operations.md). */
    private static Counter reads(MeterRegistry registry, String cache) {
        return Counter.builder("fulcrum.dataset.reads")
                .description("Dataset reads (GET of a dataset version), by whether the read cache answered")
                .tag("cache", cache).register(registry);
    }

    public byte[] readJson(String entity, String project, String objectId, String digest) {
        DatasetService.requireObjectId(objectId);
        VersionSelector selector = VersionSelector.parse(digest, "path", "digest");
        DatasetReadCache.Key key = new DatasetReadCache.Key(current.keyHash(), entity, project, objectId, digest);
        DatasetReadCache.Answer known = cache.get(key);
        if (known != null) {
            if (changes.unchanged(known.stamp())) {
                current.authenticated(known.caller());
                apiKeys.noteUse(known.caller().apiKeyId());
                hits.increment();
                return known.body();
            }
            cache.remove(key, known);
        }
        misses.increment();
        long stamp = changes.stamp(); // read before the statement: a change committed after it moves the generation
        try (Connection connection = dataSource.getConnection()) {
            return read(connection, key, selector, stamp);
        } catch (SQLException e) {
            throw ApiException.unavailable("Database unavailable");
        }
    }

    private byte[] read(Connection connection, DatasetReadCache.Key key, VersionSelector selector, long stamp)
            throws SQLException {
        DatasetStatements.Read found = statements
                .read(connection, key.keyHash(), key.entity(), key.project(), key.objectId(), selector)
                .orElseThrow(ApiKeys::invalidKey);
        current.authenticated(found.caller());
        apiKeys.recordUse(connection, found.caller().apiKeyId());
        apiKeys.remember(key.keyHash(), found.caller(), stamp);
        if (found.entityId() == null) {
            throw ApiException.notFound("Entity " + key.entity() + " not found");
        }
        access.authorize(key.entity(), key.project(), found.entityId(), found.projectId(), found.role(), Role.VIEWER);
        if (found.projectId() == null) {
            throw ApiException.notFound("Project " + key.entity() + "/" + key.project() + " not found");
        }
        if (found.version() == null) {
            throw ApiException.notFound("Dataset " + key.entity() + "/" + key.project() + "/" + key.objectId() + ":"
                    + selector + " not found");
        }
        try {
            byte[] body = json.writeValueAsBytes(
                    DatasetMapper.toReadRes(new DatasetService.Version(found.version(), key.entity(), key.project())));
            cache.put(key, stamp, found.caller(), body);
            return body;
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A dataset version could not be written as JSON", e);
        }
    }
}
