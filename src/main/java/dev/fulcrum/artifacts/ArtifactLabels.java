package dev.fulcrum.artifacts;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Access.RegistryRef;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactNames.Selector;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.events.EventType;
import dev.fulcrum.events.PlatformEvents;
import dev.fulcrum.events.PlatformEvents.Scope;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Aliases and tags, of a version in a project collection or of a link in a registry collection: one path for both. An
 * alias names one version of its collection (setting it moves it); a tag may be on many. Adding a label that is there
 * already changes nothing and records no event.
 */
@ApplicationScoped
public class ArtifactLabels {

    @Inject
    Access access;

    @Inject
    PlatformEvents events;

    @Inject
    ArtifactCollections collections;

    @Inject
    ArtifactVersions versions;

    @Inject
    RegistryLinks links;

    @Inject
    EntityManager em;

    /** An alias or a tag: they differ in their name rule and their tables. */
    public enum Label {
        ALIAS("alias", EventType.ADD_ARTIFACT_ALIAS, null),
        TAG("tag", EventType.ADD_ARTIFACT_TAG, EventType.REMOVE_ARTIFACT_TAG);

        final String field;
        final EventType added;
        /** The event of taking the label away; none for an alias (W&B's automations have no alias removal). */
        final EventType removed;

        Label(String field, EventType added, EventType removed) {
            this.field = field;
            this.added = added;
            this.removed = removed;
        }

        /**
         * Whether setting the label may take it from another version of the collection (an alias): then the writers of
         * one collection go one by one. A tag is added or removed by one atomic statement and needs no lock, so that
         * tagging many versions of one collection at once is not serialized.
         */
        boolean moves() {
            return this == ALIAS;
        }

        void check(String value) {
            if (this == ALIAS) {
                ArtifactNames.alias(value, "path", field);
            }
        }
    }

    /** What carries labels, as a request names it. */
    public sealed interface Target permits ProjectVersion, LinkedVersion {
    }

    /** Version {@code version} ({@code v<N>} or an alias) of a project collection. */
    public record ProjectVersion(String entity, String project, String collection, String version) implements Target {
    }

    /** Version {@code version} ({@code v<N>}, {@code latest} or an alias) of a registry collection. */
    public record LinkedVersion(String registry, String collection, String version) implements Target {
    }

    /** Gives the target the label; the version as it now is. */
    @Transactional
    public VersionView add(Target target, Label label, String value) {
        Labelled labelled = resolve(target, label, value);
        boolean changed = labelled.add(label, value);
        VersionView view = labelled.view(); // read once: the event's payload and the answer
        if (changed) {
            labelled.record(label.added, view, label == Label.ALIAS ? value : view.version(), label.field, value);
        }
        return view;
    }

    /** Takes the label from the target; 404 if it does not have it. A tag's removal writes its event. */
    @Transactional
    public VersionView remove(Target target, Label label, String value) {
        Labelled labelled = resolve(target, label, value);
        if (!labelled.remove(label, value)) {
            throw ApiException.notFound(labelled.describe() + " has no " + label.field + " " + value);
        }
        VersionView view = labelled.view();
        if (label.removed != null) {
            labelled.record(label.removed, view, view.version(), label.field, value);
        }
        return view;
    }

    /** Checks the names, authorizes a member, and for an alias locks the target's collection for the transaction. */
    private Labelled resolve(Target target, Label label, String value) {
        if (target instanceof ProjectVersion p) {
            Selector selector = Selector.parse(p.version(), "path", "version");
            label.check(value);
            ProjectRef ref = access.project(p.entity(), p.project(), Role.MEMBER);
            ArtifactCollection collection = label.moves() ? collections.lock(ref.projectId(), p.collection())
                    : collections.require(ref, p.collection());
            if (collection == null) {
                throw ArtifactCollections.notFound(ref, p.collection());
            }
            return new VersionLabels(ref, collection.id, versions.find(ref, collection.id, p.collection(), selector),
                    selector);
        }
        LinkedVersion l = (LinkedVersion) target;
        Selector selector = Selector.parse(l.version(), "path", "version");
        label.check(value);
        RegistryRef ref = access.registry(l.registry(), Role.MEMBER);
        if (label.moves()) {
            links.lock(ref, l.collection());
        }
        return new LinkLabels(ref, l.collection(), links.find(ref, l.collection(), selector), selector);
    }

    /** The labels of one version or link. */
    private interface Labelled {

        /** False if it had the label already. */
        boolean add(Label label, String value);

        /** False if it did not have the label. */
        boolean remove(Label label, String value);

        VersionView view();

        void record(EventType type, VersionView view, String name, String field, String value);

        String describe();
    }

    private final class VersionLabels implements Labelled {
        private final ProjectRef ref;
        private final long collectionId;
        private final long versionId;
        private final Selector selector;

        VersionLabels(ProjectRef ref, long collectionId, long versionId, Selector selector) {
            this.ref = ref;
            this.collectionId = collectionId;
            this.versionId = versionId;
            this.selector = selector;
        }

        @Override
        public boolean add(Label label, String value) {
            return label == Label.ALIAS ? ArtifactStatements.setAlias(em, collectionId, value, versionId)
                    : ArtifactStatements.addTag(em, versionId, value);
        }

        @Override
        public boolean remove(Label label, String value) {
            return (label == Label.ALIAS ? ArtifactAlias.delete("versionId = ?1 and alias = ?2", versionId, value)
                    : ArtifactTag.delete("versionId = ?1 and tag = ?2", versionId, value)) > 0;
        }

        @Override
        public VersionView view() {
            return versions.view(ref, versionId, true);
        }

        @Override
        public void record(EventType type, VersionView view, String name, String field, String value) {
            ObjectNode payload = ArtifactViews.payload(view, name);
            payload.put(field, value);
            Caller caller = access.caller();
            events.record(type, Scope.project(ref.projectId()), caller.userId(), caller.username(), payload);
        }

        @Override
        public String describe() {
            return "Version " + selector;
        }
    }

    private final class LinkLabels implements Labelled {
        private final RegistryRef ref;
        private final String collection;
        private final RegistryLink link;
        private final Selector selector;

        LinkLabels(RegistryRef ref, String collection, RegistryLink link, Selector selector) {
            this.ref = ref;
            this.collection = collection;
            this.link = link;
            this.selector = selector;
        }

        @Override
        public boolean add(Label label, String value) {
            return label == Label.ALIAS
                    ? RegistryStatements.setLinkAlias(em, ref.registryId(), collection, value, link.id)
                    : RegistryStatements.addLinkTag(em, link.id, value);
        }

        @Override
        public boolean remove(Label label, String value) {
            return (label == Label.ALIAS ? RegistryLinkAlias.delete("linkId = ?1 and alias = ?2", link.id, value)
                    : RegistryLinkTag.delete("linkId = ?1 and tag = ?2", link.id, value)) > 0;
        }

        @Override
        public VersionView view() {
            return links.linkedView(ref, collection, link);
        }

        @Override
        public void record(EventType type, VersionView view, String name, String field, String value) {
            links.recordLinked(type, ref, view, name, field, value);
        }

        @Override
        public String describe() {
            return "Version " + selector + " of " + ref.registry() + "/" + collection;
        }
    }
}
