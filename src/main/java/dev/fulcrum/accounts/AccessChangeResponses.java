package dev.fulcrum.accounts;

import jakarta.inject.Inject;
import jakarta.ws.rs.container.ContainerResponseContext;

import org.jboss.resteasy.reactive.server.ServerResponseFilter;

/**
 * The last word of a request that changed access on this replica: its transactions have committed when its response
 * filters run, and its answer has not left yet, so moving the generation here makes the client's very next request miss
 * every cached decision, whether or not the end of the transaction was seen ({@link AccessChanges#changing()} also
 * moves it at the change and after the commit; a late notification only moves it again).
 */
public class AccessChangeResponses {

    @Inject
    AccessChanges changes;

    @ServerResponseFilter
    public void afterAccessChange(ContainerResponseContext response) {
        if (AccessChanges.changedOnThisThread()) {
            changes.moved();
        }
    }
}
