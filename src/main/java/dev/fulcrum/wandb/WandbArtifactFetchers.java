package dev.fulcrum.wandb;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Names;
import dev.fulcrum.artifacts.ArtifactDrafts.Draft;
import dev.fulcrum.artifacts.ArtifactLabels;
import dev.fulcrum.artifacts.ArtifactLabels.Label;
import dev.fulcrum.artifacts.ArtifactLabels.LinkedVersion;
import dev.fulcrum.artifacts.ArtifactLabels.ProjectVersion;
import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.artifacts.MultipartUploads;
import dev.fulcrum.artifacts.RegistryLinks;
import dev.fulcrum.artifacts.VersionWrites;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.wandb.WandbArtifactNodes.ArtifactNode;
import dev.fulcrum.wandb.WandbArtifactNodes.CollectionNode;
import dev.fulcrum.wandb.WandbArtifactNodes.FileNode;
import dev.fulcrum.wandb.WandbArtifactNodes.ManifestNode;
import dev.fulcrum.wandb.WandbArtifactNodes.MembershipNode;
import dev.fulcrum.wandb.WandbArtifactNodes.TagNode;
import dev.fulcrum.wandb.WandbArtifactNodes.TypeNode;
import dev.fulcrum.wandb.WandbNodes.ProjectNode;

import graphql.schema.DataFetchingEnvironment;
import graphql.schema.idl.RuntimeWiring;

/**
 * The artifact fields of {@code wandb.graphql}: drafts and uploads through {@link WandbArtifacts}, versions, aliases,
 * tags and collections through the artifacts services, so the GraphQL door reads and writes the versions of the REST
 * API and fires the same events.
 */
@ApplicationScoped
class WandbArtifactFetchers {

    static final String BASE_URL = "baseUrl";

    /** W&B's value for "this version has no time to live": Fulcrum keeps versions until they are deleted. */
    static final long TTL_DISABLED = -2;

    static final String LATEST = WandbArtifactReads.LATEST;

    @Inject
    Access access;

    @Inject
    WandbArtifacts artifacts;

    @Inject
    WandbUploads uploads;

    @Inject
    ArtifactVersions versions;

    @Inject
    VersionWrites versionWrites;

    @Inject
    ArtifactLabels labels;

    @Inject
    RegistryLinks links;

    @Inject
    WandbArtifactReads reads;

    @Inject
    WandbLineage lineage;

    RuntimeWiring.Builder wire(RuntimeWiring.Builder wiring) {
        return wiring.type("Query", type -> type.dataFetcher("artifact", env -> reads.readable(env.getArgument("id"))))
                .type("Mutation",
                        type -> type.dataFetcher("createArtifact", this::createArtifact)
                                .dataFetcher("createArtifactManifest", this::createManifest)
                                .dataFetcher("createArtifactFiles", this::createFiles)
                                .dataFetcher("completeMultipartUploadArtifact",
                                        env -> Map.of("digest", uploads.complete(input(env))))
                                .dataFetcher("commitArtifact", this::commitArtifact)
                                .dataFetcher("useArtifact", this::useArtifact)
                                .dataFetcher("updateArtifact", this::updateArtifact)
                                .dataFetcher("addAliases", env -> aliases(env, true))
                                .dataFetcher("deleteAliases", env -> aliases(env, false))
                                .dataFetcher("linkArtifact", this::linkArtifact))
                .type("Project", type -> type.dataFetcher("internalId", env -> {
                    ProjectNode project = env.getSource();
                    return project.registry() != null ? "registry:" + project.registry().registryId()
                            : project.ref().projectId();
                }).dataFetcher("artifactCollectionMembership",
                        env -> reads.membershipByName(env.getSource(), env.getArgument("name")))
                        .dataFetcher("artifactCollection",
                                env -> reads.collection(env.getSource(), env.getArgument("name")))
                        .dataFetcher("artifact", env -> {
                            MembershipNode version = reads.membershipByName(env.getSource(), env.getArgument("name"));
                            return version == null ? null : version.artifact();
                        }))
                .type("ArtifactCollection",
                        type -> type.typeResolver(env -> env.getSchema().getObjectType("ArtifactSequence")))
                .type("ArtifactSequence",
                        type -> type
                                .dataFetcher("project",
                                        env -> reads.project(((CollectionNode) env.getSource()).entity(),
                                                ((CollectionNode) env.getSource()).project()))
                                .dataFetcher("artifactMembership", env -> {
                                    CollectionNode collection = env.getSource();
                                    return collection.registry() != null
                                            ? reads.linkedMembership(collection.registry(), collection.name(),
                                                    env.getArgument("aliasName"))
                                            : reads.membership(collection.entity(), collection.project(),
                                                    collection.name(), env.getArgument("aliasName"));
                                }).dataFetcher("latestArtifact", env -> {
                                    CollectionNode collection = env.getSource();
                                    if (collection.registry() != null) {
                                        MembershipNode latest = reads.linkedMembership(collection.registry(),
                                                collection.name(), LATEST);
                                        return latest == null ? null : latest.artifact();
                                    }
                                    VersionView newest = versions.newest(
                                            access.readableProject(collection.entity(), collection.project()),
                                            collection.name());
                                    return newest == null ? null : ArtifactNode.of(newest);
                                }).dataFetcher("digestAlgorithm", env -> "MANIFEST_MD5"))
                .type("Artifact", type -> type
                        .dataFetcher("artifactSequence", env -> WandbArtifactNodes.collectionOf(env.getSource()))
                        .dataFetcher("versionIndex",
                                artifact(node -> node.version() == null ? null : node.version().index()))
                        .dataFetcher("artifactType", artifact(node -> TypeNode.of(node.type(), null, null)))
                        .dataFetcher("description",
                                artifact(node -> node.version() != null ? node.version().description()
                                        : node.draft().description()))
                        .dataFetcher("metadata",
                                artifact(node -> node.version() != null ? SdkJson.write(node.version().metadata())
                                        : node.draft().metadata()))
                        .dataFetcher("ttlDurationSeconds", env -> TTL_DISABLED)
                        .dataFetcher("ttlIsInherited", env -> false)
                        .dataFetcher("tags",
                                artifact(node -> node.version() == null ? List.of()
                                        : node.version().tags().stream()
                                                .map(tag -> new TagNode(WandbNodes.opaque("Tag", tag), tag)).toList()))
                        .dataFetcher("historyStep", env -> null)
                        .dataFetcher("state", artifact(node -> node.version() != null ? "COMMITTED" : "PENDING"))
                        .dataFetcher("size", artifact(node -> node.version() == null ? 0L : node.version().size()))
                        .dataFetcher("digest", artifact(node -> node.version() == null ? "" : node.version().digest()))
                        .dataFetcher("digestAlgorithm", env -> "MANIFEST_MD5").dataFetcher("commitHash", env -> null)
                        .dataFetcher("fileCount",
                                artifact(node -> node.version() == null ? 0L : (long) node.version().fileCount()))
                        .dataFetcher("createdAt",
                                artifact(node -> (node.version() != null ? node.version().createdAt()
                                        : node.draft().createdAt()).toString()))
                        .dataFetcher("updatedAt",
                                artifact(node -> (node.version() != null ? node.version().createdAt()
                                        : node.draft().createdAt()).toString()))
                        .dataFetcher("aliases",
                                artifact(node -> node.version() == null ? List.of()
                                        : WandbArtifactNodes.aliasNodes(WandbArtifactNodes.collectionOf(node),
                                                node.version().aliases())))
                        .dataFetcher("artifactCollections",
                                artifact(node -> List.of(WandbArtifactNodes.collectionOf(node))))
                        .dataFetcher("currentManifest", this::currentManifest))
                .type("ArtifactCollectionMembership", type -> type
                        .dataFetcher("versionIndex", env -> ((MembershipNode) env.getSource()).index())
                        .dataFetcher("createdAt",
                                env -> ((MembershipNode) env.getSource()).artifact().version().createdAt().toString())
                        .dataFetcher("aliases", env -> {
                            MembershipNode membership = env.getSource();
                            return WandbArtifactNodes.aliasNodes(membership.collection(), membership.aliases());
                        }).dataFetcher("artifactCollection", env -> ((MembershipNode) env.getSource()).collection())
                        .dataFetcher("files", this::files));
    }

    private interface ArtifactField {
        Object read(ArtifactNode node);
    }

    private static graphql.schema.DataFetcher<Object> artifact(ArtifactField field) {
        return env -> field.read(env.getSource());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> input(DataFetchingEnvironment env) {
        return (Map<String, Object>) env.getArgument("input");
    }

    private static String base(DataFetchingEnvironment env) {
        return env.getGraphQlContext().get(BASE_URL);
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> createArtifact(DataFetchingEnvironment env) {
        Map<String, Object> input = input(env);
        String collection = (String) input.get("artifactCollectionName");
        List<String> aliases = new ArrayList<>();
        Object givenAliases = input.get("aliases");
        for (Map<String, Object> alias : givenAliases == null ? List.<Map<String, Object>> of()
                : (List<Map<String, Object>>) givenAliases) {
            if (collection.equals(alias.get("artifactCollectionName"))) {
                aliases.add((String) alias.get("alias"));
            }
        }
        List<String> tags = new ArrayList<>();
        Object given = input.get("tags");
        if (given != null) {
            for (Map<String, Object> tag : (List<Map<String, Object>>) given) {
                tags.add((String) tag.get("tagName"));
            }
        }
        Draft draft = artifacts.create((String) input.get("entityName"), (String) input.get("projectName"), collection,
                (String) input.get("artifactTypeName"), (String) input.get("description"),
                (String) input.get("metadata"), aliases, tags, (String) input.get("runName"));
        return Map.of("artifact", ArtifactNode.of(draft));
    }

    private Map<String, Object> commitArtifact(DataFetchingEnvironment env) {
        String id = (String) input(env).get("artifactID");
        VersionView version = artifacts.commit(id);
        lineage.logged(artifacts.draft(WandbArtifacts.parseArtifactId(id)[0]), version);
        return Map.of("artifact", ArtifactNode.of(version));
    }

    private Map<String, Object> createManifest(DataFetchingEnvironment env) {
        Draft draft = artifacts.writableDraft((String) input(env).get("artifactID"));
        String id = WandbNodes.opaque("ArtifactManifest", Long.toString(draft.id()));
        FileNode file = new FileNode(WandbNodes.opaque("File", "manifest:" + draft.id()), "wandb_manifest.json",
                artifacts.manifestDownloadUrl(base(env), draft.id()),
                artifacts.manifestUploadUrl(base(env), draft.id()), List.of("Content-Type:application/octet-stream"),
                null, null, null, ArtifactNode.of(draft));
        return Map.of("artifactManifest", new ManifestNode(id, file));
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> createFiles(DataFetchingEnvironment env) {
        List<Map<String, Object>> specs = (List<Map<String, Object>>) input(env).get("artifactFiles");
        List<Map<String, Object>> edges = new ArrayList<>();
        Map<String, Draft> drafts = new HashMap<>();
        for (int i = 0; i < specs.size(); i++) {
            Map<String, Object> spec = specs.get(i);
            Draft draft = drafts.computeIfAbsent((String) spec.get("artifactID"), artifacts::writableDraft);
            String name = (String) spec.get("name");
            artifacts.announce(draft, name, (String) spec.get("md5"));
            List<Map<String, Object>> parts = (List<Map<String, Object>>) spec.get("uploadPartsInput");
            Map<String, Object> multipart = null;
            if (parts != null && !parts.isEmpty()) {
                MultipartUploads.Upload upload = uploads.start(draft, name, parts, "body", "input", "artifactFiles", i,
                        "uploadPartsInput");
                List<Map<String, Object>> urls = new ArrayList<>();
                for (int part = 1; part <= upload.parts(); part++) {
                    urls.add(Map.of("partNumber", part, "uploadUrl", uploads.partUrl(base(env), upload.id(), part)));
                }
                multipart = Map.of("uploadID", Long.toString(upload.id()), "uploadUrlParts", urls);
            }
            FileNode node = new FileNode(WandbNodes.opaque("File", draft.id() + ":" + name), name, null,
                    artifacts.fileUploadUrl(base(env), draft.id(), name),
                    List.of("Content-Type:application/octet-stream"), draft.id() + "/" + name, null,
                    (String) spec.get("md5"), ArtifactNode.of(draft), multipart);
            Map<String, Object> edge = new HashMap<>();
            edge.put("node", node);
            edges.add(edge);
        }
        return Map.of("files", Map.of("pageInfo", Map.of("hasNextPage", false), "edges", edges));
    }

    private Map<String, Object> useArtifact(DataFetchingEnvironment env) {
        Map<String, Object> input = input(env);
        ArtifactNode node = reads.require((String) input.get("artifactID"));
        if (node.version() != null) {
            lineage.used(node.version(), (String) input.get("entityName"), (String) input.get("projectName"),
                    (String) input.get("runName"));
        } else {
            access.readableProject((String) input.get("entityName"), (String) input.get("projectName"));
        }
        return Map.of("artifact", node);
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> updateArtifact(DataFetchingEnvironment env) {
        Map<String, Object> input = input(env);
        ArtifactNode node = reads.require((String) input.get("artifactID"));
        if (node.version() == null) {
            throw ApiException.conflict("Artifact " + node.id() + " is not committed");
        }
        VersionView version = node.version();
        Number ttl = (Number) input.get("ttlDurationSeconds");
        if (ttl != null && ttl.longValue() != TTL_DISABLED) {
            throw ApiException.invalid(Violation.of("Versions have no time to live in Fulcrum", "value_error", "body",
                    "input", "ttlDurationSeconds"));
        }
        if (input.containsKey("metadata") || input.containsKey("description")) {
            String metadata = (String) input.get("metadata");
            version = versionWrites.describe(version.id(),
                    input.containsKey("description") ? (String) input.get("description") : version.description(),
                    metadata == null ? version.metadata() : SdkJson.object(metadata, "metadata"));
        }
        ProjectVersion target = new ProjectVersion(version.entity(), version.project(), version.collection(),
                version.version());
        for (Map<String, Object> tag : list(input.get("tagsToAdd"))) {
            labels.add(target, Label.TAG, (String) tag.get("tagName"));
        }
        for (Map<String, Object> tag : list(input.get("tagsToDelete"))) {
            labels.remove(target, Label.TAG, (String) tag.get("tagName"));
        }
        return Map.of("artifact", ArtifactNode.of(versions.byId(version.id(), false)));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Object given) {
        return given == null ? List.of() : (List<Map<String, Object>>) given;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> aliases(DataFetchingEnvironment env, boolean add) {
        Map<String, Object> input = input(env);
        ArtifactNode node = reads.require((String) input.get("artifactID"));
        if (node.version() == null) {
            throw ApiException.conflict("Artifact " + node.id() + " is not committed");
        }
        VersionView version = node.version();
        for (Map<String, Object> alias : (List<Map<String, Object>>) input.get("aliases")) {
            ProjectVersion target = new ProjectVersion(version.entity(), version.project(), version.collection(),
                    version.version());
            if (add) {
                labels.add(target, Label.ALIAS, (String) alias.get("alias"));
            } else {
                labels.remove(target, Label.ALIAS, (String) alias.get("alias"));
            }
        }
        return Map.of("success", true);
    }

    /**
     * Links a committed version into a registry collection (the SDK's {@code run.link_artifact},
     * {@code artifact.link}): the target is the project {@code wandb-registry-<registry>} of the organization's entity
     * and the collection {@code artifactPortfolioName}, made by the first link into it. Through the REST API's link, so
     * the same rules (member role on the project and on the registry) and the same {@code LINK_ARTIFACT} event hold;
     * the aliases asked for the collection are then given as the registry's aliases are.
     */
    @SuppressWarnings("unchecked")
    private Map<String, Object> linkArtifact(DataFetchingEnvironment env) {
        Map<String, Object> input = input(env);
        String registry = WandbRegistries.registryOf((String) input.get("entityName"),
                (String) input.get("projectName"));
        if (registry == null) {
            throw ApiException.invalid(Violation.of(
                    "Versions are linked to registries only: the project must be " + WandbRegistries.PROJECT_PREFIX
                            + "<registry> of the organization's entity " + WandbRegistries.ORG_ENTITY,
                    "value_error", "body", "input", "projectName"));
        }
        if (input.get("artifactPortfolioID") != null) {
            throw ApiException
                    .invalid(Violation.of("Registry collections are named (artifactPortfolioName), not given by id",
                            "value_error", "body", "input", "artifactPortfolioID"));
        }
        String collection = (String) input.get("artifactPortfolioName");
        if (collection == null || collection.isEmpty()) {
            throw ApiException.invalid(Violation.of("The registry collection is named by artifactPortfolioName",
                    "missing", "body", "input", "artifactPortfolioName"));
        }
        if (!Names.isName(collection, Names.NAME_MAX)) { // the REST API's collection names (Name of artifacts.yaml)
            throw ApiException.invalid(Violation.of(
                    "A collection name is 1 to 128 letters, digits, '_', '.' or '-',"
                            + " beginning with a letter or a digit",
                    "string_pattern_mismatch", "body", "input", "artifactPortfolioName"));
        }
        ArtifactNode node = reads.require((String) input.get("artifactID"));
        if (node.version() == null) {
            throw ApiException.conflict("Artifact " + node.id() + " is not committed");
        }
        VersionView version = node.version();
        int index = links.link(version.entity(), version.project(), version.collection(), version.version(), registry,
                collection).link().index();
        for (Map<String, Object> alias : list(input.get("aliases"))) {
            // latest is the newest link's already
            if (collection.equals(alias.get("artifactCollectionName")) && !LATEST.equals(alias.get("alias"))) {
                labels.add(new LinkedVersion(registry, collection, "v" + index), Label.ALIAS,
                        (String) alias.get("alias"));
            }
        }
        Map<String, Object> payload = new HashMap<>();
        payload.put("versionIndex", index);
        payload.put("artifactMembership", reads.linkedMembership(registry, collection, "v" + index));
        payload.put("clientMutationId", input.get("clientMutationId"));
        return payload;
    }

    private Map<String, Object> currentManifest(DataFetchingEnvironment env) {
        ArtifactNode node = env.getSource();
        Draft draft = node.draft() != null ? node.draft() : artifacts.manifestOf(node.version().id());
        if (draft == null && node.version() != null) {
            // a version the SDK did not log: its manifest is made from its files
            long version = node.version().id();
            FileNode file = new FileNode(WandbNodes.opaque("File", "manifest:version:" + version),
                    "wandb_manifest.json", artifacts.versionManifestUrl(base(env), version), null, List.of(), null,
                    null, null, node);
            return Map.of("id", WandbNodes.opaque("ArtifactManifest", "version:" + version), "file", file);
        }
        if (draft == null || draft.manifestDigest() == null) {
            return null;
        }
        FileNode file = new FileNode(WandbNodes.opaque("File", "manifest:" + draft.id()), "wandb_manifest.json",
                artifacts.manifestDownloadUrl(base(env), draft.id()), null, List.of(), null, null, null, node);
        return Map.of("id", WandbNodes.opaque("ArtifactManifest", Long.toString(draft.id())), "file", file);
    }

    /** A page of the version's files with signed download URLs; the cursor is the index of the page's last file. */
    private Map<String, Object> files(DataFetchingEnvironment env) {
        MembershipNode membership = env.getSource();
        VersionView version = versions.byId(membership.artifact().version().id(), true);
        String after = env.getArgument("after");
        Integer first = env.getArgument("first");
        int start;
        try {
            start = after == null || after.isEmpty() ? 0 : Integer.parseInt(after) + 1;
        } catch (NumberFormatException e) {
            throw ApiException.invalid(Violation.of("Not a cursor of this list", "value_error", "query", "after"));
        }
        int size = first == null ? 5000 : Math.max(1, Math.min(first, 10_000));
        List<FileView> all = version.files();
        List<Map<String, Object>> edges = new ArrayList<>();
        int end = Math.min(all.size(), start + size);
        for (int i = start; i < end; i++) {
            FileView file = all.get(i);
            FileNode node = new FileNode(WandbNodes.opaque("File", version.id() + ":" + file.path()), file.path(),
                    artifacts.fileDownloadUrl(base(env), version.id(), file.path()), null, List.of(), null, file.size(),
                    null, membership.artifact());
            edges.add(Map.of("node", node, "cursor", Integer.toString(i)));
        }
        Map<String, Object> pageInfo = new HashMap<>();
        pageInfo.put("hasNextPage", end < all.size());
        pageInfo.put("endCursor", end > start ? Integer.toString(end - 1) : after);
        return Map.of("pageInfo", pageInfo, "edges", edges);
    }
}
