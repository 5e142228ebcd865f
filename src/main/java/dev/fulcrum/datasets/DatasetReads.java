package dev.fulcrum.datasets;

import java.sql.Connection;
import java.sql.SQLException;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.agroal.api.AgroalDataSource;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.AccessChanges;
import dev.fulcrum.accounts.ApiKeys;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.http.HttpRequestMetrics;

/**
 * The hot path of the datasets API: reading one version, answered as serialized JSON. An answer given to the same API
 * key for the same path is reused while no access change has arrived (see {@link DatasetReadCache}): that costs no
 * database round trip. Otherwise the caller's role (from the views accounts owns) and the version come from one
 * statement ({@link DatasetStatements#read}), outside any transaction; the key was checked by {@code Authentication}.
 * <p>
 * A reused answer does not wait for JAX-RS: a Vert.x route ahead of it ({@link #answerFromMemory}) writes it on the
 * event loop when the key and the answer are both remembered and still valid, with the status, headers and body the
 * resource method would give. Every other request (a first read, a key not checked since the last access change, a path
 * with an escape or a query, an {@code Accept} other than JSON's) goes on to the resource method.
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
    AgroalDataSource dataSource;

    @Inject
    AccessChanges changes;

    @Inject
    ObjectMapper json;

    @Inject
    MeterRegistry registry;

    /** The read's path template, as RESTEasy names it (metrics and traces). */
    static final String TEMPLATE = "/v2/{entity}/{project}/datasets/{object_id}/versions/{digest}";
    private static final String JSON = "application/json";

    @Inject
    ApiKeys apiKeys;

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

    /** GET under {@code /v2/} looks for a remembered answer first; a prefix, as the router tries it for every GET. */
    void routes(@Observes Router router) {
        router.route("/v2/*").method(HttpMethod.GET).order(-100).handler(this::answerFromMemory);
    }

    private void answerFromMemory(RoutingContext context) {
        byte[] body = remembered(context.request());
        if (body == null) {
            context.next();
            return;
        }
        HttpRequestMetrics.template(context, TEMPLATE);
        context.response().putHeader(HttpHeaders.CONTENT_TYPE, JSON).end(Buffer.buffer(body));
    }

    /** The answer a read of this request was given before, if the caller's key and the answer are both still valid. */
    private byte[] remembered(HttpServerRequest request) {
        String accept = request.getHeader(HttpHeaders.ACCEPT);
        String path = request.path();
        if (request.query() != null || path.indexOf('%') >= 0
                || (accept != null && !accept.equals("*/*") && !accept.equals(JSON))) {
            return null;
        }
        // "", "v2", entity, project, "datasets", object id, "versions", digest
        String[] segments = path.split("/", -1);
        if (segments.length != 8 || !segments[4].equals("datasets") || !segments[6].equals("versions")) {
            return null;
        }
        Caller caller = apiKeys.remembered(request.getHeader(HttpHeaders.AUTHORIZATION));
        if (caller == null) {
            return null;
        }
        return kept(new DatasetReadCache.Key(caller.userId(), segments[2], segments[3], segments[5], segments[7]));
    }

    /** The answer kept for the read, counted as a hit, if no access change came since it was read; else null. */
    private byte[] kept(DatasetReadCache.Key key) {
        DatasetReadCache.Answer known = cache.get(key);
        if (known == null) {
            return null;
        }
        if (!changes.unchanged(known.stamp())) {
            cache.remove(key, known);
            return null;
        }
        hits.increment();
        return known.body();
    }

    public byte[] readJson(String entity, String project, String objectId, String digest) {
        DatasetService.requireObjectId(objectId);
        VersionSelector selector = VersionSelector.parse(digest, "path", "digest");
        Caller caller = access.caller();
        DatasetReadCache.Key key = new DatasetReadCache.Key(caller.userId(), entity, project, objectId, digest);
        byte[] known = kept(key);
        if (known != null) {
            return known;
        }
        misses.increment();
        long stamp = changes.stamp(); // read before the statement: a change committed after it moves the generation
        try {
            return NativeSql.pooled(dataSource, connection -> read(connection, caller, key, selector, stamp));
        } catch (SQLException e) {
            throw ApiException.unavailable("Database unavailable");
        }
    }

    private byte[] read(Connection connection, Caller caller, DatasetReadCache.Key key, VersionSelector selector,
            long stamp) throws SQLException {
        DatasetStatements.Read found = statements
                .read(connection, caller.userId(), key.entity(), key.project(), key.objectId(), selector)
                .orElseThrow(() -> ApiException.notFound("Entity " + key.entity() + " not found"));
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
            cache.put(key, stamp, body);
            return body;
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A dataset version could not be written as JSON", e);
        }
    }
}
