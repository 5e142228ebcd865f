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
import dev.fulcrum.accounts.ApiKeys;
import dev.fulcrum.accounts.AuthenticatesInQuery;
import dev.fulcrum.accounts.CurrentCaller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.ApiException;

/**
 * The hot path of the datasets API: reading one version, answered as serialized JSON. An answer given to the same API
 * key for the same path is reused while the access epoch has not moved (see {@link DatasetReadCache}): that costs one
 * statement, the API key check. Otherwise the API key, the caller's access, the version and the epoch come from one
 * statement ({@link DatasetStatements#read}). Both run outside any transaction (the resource method is
 * {@link AuthenticatesInQuery}).
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
        try (Connection connection = dataSource.getConnection()) {
            DatasetReadCache.Answer known = cache.get(key);
            if (known != null) {
                DatasetStatements.KeyCheck check = statements.checkKey(connection, key.keyHash())
                        .orElseThrow(ApiKeys::invalidKey);
                if (authenticated(connection, check).epoch() == known.epoch()) {
                    hits.increment();
                    return known.body();
                }
                cache.remove(key, known);
            }
            misses.increment();
            return read(connection, key, selector);
        } catch (SQLException e) {
            throw ApiException.unavailable("Database unavailable");
        }
    }

    private byte[] read(Connection connection, DatasetReadCache.Key key, VersionSelector selector) throws SQLException {
        DatasetStatements.Read found = statements
                .read(connection, key.keyHash(), key.entity(), key.project(), key.objectId(), selector)
                .orElseThrow(ApiKeys::invalidKey);
        authenticated(connection, found.key());
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
            cache.put(key, found.key().epoch(), body);
            return body;
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A dataset version could not be written as JSON", e);
        }
    }

    /** Records the caller of a valid key, and its use (written at most once a minute per key). */
    private DatasetStatements.KeyCheck authenticated(Connection connection, DatasetStatements.KeyCheck key)
            throws SQLException {
        current.authenticated(key.caller());
        apiKeys.recordUse(connection, key.caller().apiKeyId());
        return key;
    }
}
