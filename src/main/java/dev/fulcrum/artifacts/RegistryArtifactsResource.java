package dev.fulcrum.artifacts;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.artifacts.ArtifactLabels.Label;
import dev.fulcrum.artifacts.ArtifactLabels.LinkedVersion;
import dev.fulcrum.artifacts.api.RegistryArtifactsApi;

public class RegistryArtifactsResource implements RegistryArtifactsApi {

    @Inject
    RegistryLinks links;

    @Inject
    ArtifactLabels labels;

    @Inject
    FileDownloads downloads;

    @Inject
    CollectionTags collectionTags;

    @Override
    public Response listRegistryCollections(String registry, String type) {
        return Response.ok(links.listCollections(registry, type)).build();
    }

    @Override
    public Response addRegistryCollectionTag(String registry, String collection, String tag) {
        return Response.ok(collectionTags.addInRegistry(registry, collection, List.of(tag))).build();
    }

    @Override
    public Response removeRegistryCollectionTag(String registry, String collection, String tag) {
        return Response.ok(collectionTags.removeInRegistry(registry, collection, List.of(tag))).build();
    }

    @Override
    public Response unlinkVersion(String registry, String collection, String version) {
        links.unlinkVersion(registry, collection, version);
        return Response.noContent().build();
    }

    @Override
    public Response listLinkedVersions(String registry, String collection, Integer limit, Integer offset) {
        return Response.ok(ArtifactMapper.toPage(links.listLinked(registry, collection, limit, offset))).build();
    }

    @Override
    public Response getLinkedVersion(String registry, String collection, String version) {
        return Response.ok(ArtifactMapper.toVersion(links.getLinked(registry, collection, version))).build();
    }

    @Override
    public Response downloadLinkedFile(String registry, String collection, String version, String path, String range,
            String ifNoneMatch) {
        return downloads.send(links.linkedFile(registry, collection, version, path), range, ifNoneMatch);
    }

    @Override
    public Response addLinkedAlias(String registry, String collection, String version, String alias) {
        return Response
                .ok(ArtifactMapper
                        .toVersion(labels.add(new LinkedVersion(registry, collection, version), Label.ALIAS, alias)))
                .build();
    }

    @Override
    public Response removeLinkedAlias(String registry, String collection, String version, String alias) {
        return Response
                .ok(ArtifactMapper
                        .toVersion(labels.remove(new LinkedVersion(registry, collection, version), Label.ALIAS, alias)))
                .build();
    }

    @Override
    public Response addLinkedTag(String registry, String collection, String version, String tag) {
        return Response
                .ok(ArtifactMapper
                        .toVersion(labels.add(new LinkedVersion(registry, collection, version), Label.TAG, tag)))
                .build();
    }

    @Override
    public Response removeLinkedTag(String registry, String collection, String version, String tag) {
        return Response
                .ok(ArtifactMapper
                        .toVersion(labels.remove(new LinkedVersion(registry, collection, version), Label.TAG, tag)))
                .build();
    }
}
