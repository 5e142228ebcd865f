package dev.fulcrum.artifacts;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.multipart.FileUpload;

import dev.fulcrum.artifacts.ArtifactLabels.Label;
import dev.fulcrum.artifacts.ArtifactLabels.ProjectVersion;
import dev.fulcrum.artifacts.api.ArtifactsApi;
import dev.fulcrum.artifacts.api.model.AliasAdd;
import dev.fulcrum.artifacts.api.model.CollectionCreate;
import dev.fulcrum.artifacts.api.model.CollectionList;
import dev.fulcrum.artifacts.api.model.FileList;
import dev.fulcrum.artifacts.api.model.LinkCreate;

public class ArtifactsResource implements ArtifactsApi {

    @Inject
    ArtifactCollections collections;

    @Inject
    ArtifactVersions versions;

    @Inject
    VersionWrites writes;

    @Inject
    ArtifactLabels labels;

    @Inject
    RegistryLinks links;

    @Inject
    FileDownloads downloads;

    @Inject
    CollectionTags collectionTags;

    @Override
    public Response listCollections(String entity, String project, String type) {
        return Response.ok(new CollectionList().collections(
                collections.listCollections(entity, project, type).stream().map(ArtifactMapper::toCollection).toList()))
                .build();
    }

    @Override
    public Response createCollection(String entity, String project, CollectionCreate req) {
        return Response.status(201).entity(ArtifactMapper.toCollection(
                collections.createCollection(entity, project, req.getName(), req.getType(), req.getDescription())))
                .build();
    }

    @Override
    public Response getCollection(String entity, String project, String collection) {
        return Response.ok(ArtifactMapper.toCollection(collections.getCollection(entity, project, collection))).build();
    }

    @Override
    public Response addCollectionTag(String entity, String project, String collection, String tag) {
        return Response.ok(ArtifactMapper.toCollection(collectionTags.add(entity, project, collection, List.of(tag))))
                .build();
    }

    @Override
    public Response removeCollectionTag(String entity, String project, String collection, String tag) {
        return Response
                .ok(ArtifactMapper.toCollection(collectionTags.remove(entity, project, collection, List.of(tag))))
                .build();
    }

    @Override
    public Response deleteCollection(String entity, String project, String collection) {
        collections.deleteCollection(entity, project, collection);
        return Response.noContent().build();
    }

    @Override
    public Response listVersions(String entity, String project, String collection, Integer limit, Integer offset) {
        return Response.ok(ArtifactMapper.toPage(versions.listVersions(entity, project, collection, limit, offset)))
                .build();
    }

    @Override
    public Response createVersion(String entity, String project, String collection, List<FileUpload> files,
            String metadata, String description, String type) {
        VersionWrites.Created created = writes.createVersion(entity, project, collection, files, metadata, description,
                type);
        return Response.status(created.isNew() ? 201 : 200).entity(ArtifactMapper.toVersion(created.version())).build();
    }

    @Override
    public Response getVersion(String entity, String project, String collection, String version) {
        return Response.ok(ArtifactMapper.toVersion(versions.getVersion(entity, project, collection, version))).build();
    }

    @Override
    public Response listFiles(String entity, String project, String collection, String version) {
        return Response.ok(new FileList().files(versions.getVersion(entity, project, collection, version).files()
                .stream().map(ArtifactMapper::toFile).toList())).build();
    }

    @Override
    public Response downloadFile(String entity, String project, String collection, String version, String path,
            String range, String ifNoneMatch) {
        return downloads.send(versions.file(entity, project, collection, version, path), range, ifNoneMatch);
    }

    @Override
    public Response addAlias(String entity, String project, String collection, String version, String alias) {
        return Response
                .ok(ArtifactMapper.toVersion(
                        labels.add(new ProjectVersion(entity, project, collection, version), Label.ALIAS, alias)))
                .build();
    }

    @Override
    public Response addAliasFromBody(String entity, String project, String collection, String version, AliasAdd body) {
        String alias = ArtifactNames.alias(body.getAlias(), "body", "alias");
        return addAlias(entity, project, collection, version, alias);
    }

    @Override
    public Response removeAlias(String entity, String project, String collection, String version, String alias) {
        return Response
                .ok(ArtifactMapper.toVersion(
                        labels.remove(new ProjectVersion(entity, project, collection, version), Label.ALIAS, alias)))
                .build();
    }

    @Override
    public Response addTag(String entity, String project, String collection, String version, String tag) {
        return Response.ok(ArtifactMapper
                .toVersion(labels.add(new ProjectVersion(entity, project, collection, version), Label.TAG, tag)))
                .build();
    }

    @Override
    public Response removeTag(String entity, String project, String collection, String version, String tag) {
        return Response
                .ok(ArtifactMapper.toVersion(
                        labels.remove(new ProjectVersion(entity, project, collection, version), Label.TAG, tag)))
                .build();
    }

    @Override
    public Response linkVersion(String entity, String project, String collection, String version, LinkCreate req) {
        RegistryLinks.Linked linked = links.link(entity, project, collection, version, req.getRegistry(),
                req.getCollection());
        return Response.status(linked.isNew() ? 201 : 200).entity(ArtifactMapper.toLink(linked.link())).build();
    }

}
