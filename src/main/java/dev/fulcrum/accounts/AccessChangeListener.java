package dev.fulcrum.accounts;

import jakarta.persistence.PostPersist;
import jakarta.persistence.PostRemove;
import jakarta.persistence.PostUpdate;

/**
 * On the entities whose changes decide access (users, keys, entities, memberships, projects, dataset versions): the
 * replica that writes one drops its cached decisions as the transaction ends, without waiting for the notification the
 * database trigger sends to every replica (see {@link AccessChanges}). An insert counts too: a new dataset version
 * moves what "latest" means.
 */
public class AccessChangeListener {

    @PostPersist
    @PostUpdate
    @PostRemove
    void changed(Object entity) {
        AccessChanges.changing();
    }
}
