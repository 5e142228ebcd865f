package dev.fulcrum.datasets;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.multipart.FileUpload;

import dev.fulcrum.datasets.api.FilesApi;
import dev.fulcrum.datasets.api.model.FileContentReq;
import dev.fulcrum.datasets.api.model.FileCreateRes;
import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/** Weave's file endpoints (the source code of the ops the SDKs publish). */
public class FilesResource implements FilesApi {

    @Inject
    WeaveFiles files;

    @Inject
    FulcrumConfig config;

    @Override
    public Response fileCreate(String projectId, FileUpload file, String expectedDigest) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(projectId, "body", "project_id");
        if (file == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body", "file"));
        }
        if (file.size() > config.datasets().maxRequestBytes()) {
            throw ApiException.payloadTooLarge("A file is at most " + config.datasets().maxRequestBytes() + " bytes");
        }
        byte[] content;
        try {
            content = Files.readAllBytes(file.uploadedFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Response.ok(new FileCreateRes().digest(files.create(name, file.fileName(), content, expectedDigest)))
                .build();
    }

    @Override
    public Response fileContent(FileContentReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        return Response.ok(files.content(name, req.getDigest()), MediaType.APPLICATION_OCTET_STREAM_TYPE).build();
    }
}
