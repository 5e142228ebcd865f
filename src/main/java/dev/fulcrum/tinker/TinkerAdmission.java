package dev.fulcrum.tinker;

import java.time.OffsetDateTime;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.platform.database.AdvisoryLocks;
import dev.fulcrum.platform.json.StoredJson;

/**
 * How many live training clients an entity may have ({@code fulcrum.tinker.max-live-models-per-entity}), and the failed
 * future a {@code create_model} beyond it answers. Runs in {@link Tinker#createModel}'s transaction.
 */
@ApplicationScoped
class TinkerAdmission {

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    TinkerSettings settings;

    @Inject
    StoredJson json;

    /**
     * Null when the entity may have one more live training client (waiting for a worker or held by one), else why not;
     * holds the entity's lock until the transaction ends, so that two concurrent {@code create_model}s cannot both take
     * the last one.
     */
    String liveModelsLeft(String entity) {
        AdvisoryLocks.lock(em, AdvisoryLocks.TINKER_LIVE_MODELS, entity);
        long live = TinkerModel.count("state in ('waiting', 'held') and sessionId in "
                + "(select s.id from TinkerSession s where s.entity = ?1)", entity);
        int max = settings.maxLiveModelsPerEntity();
        if (live < max) {
            return null;
        }
        return entity + " has " + live + " live Tinker training clients, the most allowed here"
                + " (fulcrum.tinker.max-live-models-per-entity = " + max + "): a training client stays live until its"
                + " session ends or it has no operation for " + settings.idleRelease().toMinutes()
                + " minutes; save its weights and end its session (or let it idle) before creating another";
    }

    /**
     * A {@code create_model} future that failed already (no model), for a caller who could otherwise create one: the
     * SDK raises it at once, and retries of the POST answer it.
     */
    String refusedCreate(TinkerSession session, ObjectNode body, String idempotencyKey, String why,
            OffsetDateTime now) {
        access.writableProject(session.entity, session.project);
        TinkerRequest refused = new TinkerRequest();
        refused.id = TinkerIds.random("req-", 24);
        refused.userId = session.userId;
        refused.kind = "create_model";
        refused.idempotencyKey = idempotencyKey;
        refused.request = json.write(body);
        refused.state = "failed";
        refused.error = why;
        refused.category = "user";
        refused.endedAt = now;
        refused.persistAndFlush();
        return refused.id;
    }
}
