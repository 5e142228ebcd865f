package dev.fulcrum.accounts;

import java.sql.Connection;
import java.sql.SQLException;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.agroal.api.AgroalDataSource;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import dev.fulcrum.platform.NativeSql;

/**
 * The access epoch (table {@code access_epoch}, moved on by every commit that changes users, keys, memberships,
 * projects or dataset versions), read fresh for callers that keep checked answers in memory, as the inference key cache
 * does.
 * <p>
 * Reads are shared: at most one is in flight on this replica, and a caller waits for the first read that
 * <em>starts</em> after it asked. So the value it gets is at least as new as every commit that finished before it asked
 * (a change committed through any replica counts on the very next request), while under load one statement answers
 * every caller that arrived during the previous one: the database sees at most one such read per round trip, not one
 * per request.
 */
@ApplicationScoped
public class AccessEpoch {

    @Inject
    AgroalDataSource dataSource;

    @Inject
    Vertx vertx;

    private boolean reading;
    /** The callers that arrived while a read was in flight: they get the next one. */
    private Promise<Long> next;

    /** The epoch as of a moment after this call; completes on the caller's context when there is one. */
    public Future<Long> current() {
        Promise<Long> promise;
        boolean start;
        synchronized (this) {
            if (!reading) {
                reading = true;
                promise = Promise.promise();
                start = true;
            } else {
                if (next == null) {
                    next = Promise.promise();
                }
                promise = next;
                start = false;
            }
        }
        if (start) {
            read(promise);
        }
        Context context = Vertx.currentContext();
        if (context == null) {
            return promise.future();
        }
        Promise<Long> here = Promise.promise();
        promise.future().onComplete(result -> context.runOnContext(ignored -> here.handle(result)));
        return here.future();
    }

    private void read(Promise<Long> promise) {
        vertx.<Long> executeBlocking(this::select, false).onComplete(result -> {
            Promise<Long> following;
            synchronized (this) {
                following = next;
                next = null;
                reading = following != null;
            }
            if (following != null) {
                read(following);
            }
            promise.handle(result);
        });
    }

    private long select() throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            return NativeSql.first(connection, "select value from access_epoch where id = 1", row -> row.longValue(0))
                    .orElseThrow();
        }
    }
}
