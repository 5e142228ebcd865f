package dev.fulcrum.wandb;

import java.io.InputStream;
import java.util.Map;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;

import dev.fulcrum.accounts.AcceptsAnonymous;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.FileDownloads;
import dev.fulcrum.wandb.api.WandbArtifactFilesApi;

/**
 * The signed URLs the W&B SDK uploads artifact files and manifests to and downloads them from: no credentials, the
 * URL's signature (made by {@link WandbArtifacts} for one draft or version, one file and one method) stands for them.
 */
public class ArtifactFilesResource implements WandbArtifactFilesApi {

    @Inject
    WandbArtifacts artifacts;

    @Inject
    WandbUploads uploads;

    @Inject
    FileDownloads downloads;

    @Context
    HttpHeaders headers;

    @Override
    @AcceptsAnonymous
    public Response uploadArtifactDraftFile(Long draft, String name, Long expires, String signature, InputStream body) {
        artifacts.uploadFile(draft, name, expires, signature, body);
        return Response.ok(Map.of()).type(MediaType.APPLICATION_JSON_TYPE).build();
    }

    @Override
    @AcceptsAnonymous
    public Response uploadArtifactFilePart(Long upload, Integer part, Long expires, String signature, InputStream body,
            String contentMD5) {
        String md5 = uploads.putPart(upload, part, expires, signature, contentMD5, body, headers.getLength());
        return Response.ok().header("ETag", "\"" + md5 + "\"").build();
    }

    @Override
    @AcceptsAnonymous
    public Response uploadArtifactDraftManifest(Long draft, Long expires, String signature, InputStream body) {
        artifacts.uploadManifest(draft, expires, signature, body);
        return Response.ok(Map.of()).type(MediaType.APPLICATION_JSON_TYPE).build();
    }

    @Override
    @AcceptsAnonymous
    public Response downloadArtifactManifest(Long draft, Long expires, String signature) {
        artifacts.check("GET manifest " + draft, expires, signature);
        InputStream manifest = artifacts.openManifest(draft);
        StreamingOutput out = sink -> {
            try (InputStream in = manifest) {
                in.transferTo(sink);
            }
        };
        return Response.ok(out).type(MediaType.APPLICATION_JSON_TYPE).build();
    }

    @Override
    @AcceptsAnonymous
    public Response downloadArtifactVersionManifest(Long version, Long expires, String signature) {
        artifacts.check("GET version manifest " + version, expires, signature);
        return Response.ok(artifacts.versionManifest(version)).type(MediaType.APPLICATION_JSON_TYPE).build();
    }

    @Override
    @AcceptsAnonymous
    public Response downloadArtifactVersionFile(Long version, String name, Long expires, String signature, String range,
            String ifNoneMatch) {
        artifacts.check("GET file " + version + " " + name, expires, signature);
        FileView file = artifacts.signedFile(version, name);
        return downloads.send(file, range, ifNoneMatch);
    }
}
