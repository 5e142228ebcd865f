package dev.fulcrum.wandb;

import java.io.InputStream;
import java.util.Map;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.AcceptsAnonymous;
import dev.fulcrum.artifacts.FileDownloads;
import dev.fulcrum.runs.RunFileAnswers;
import dev.fulcrum.runs.RunFiles;
import dev.fulcrum.wandb.api.WandbRunFilesApi;

/**
 * The signed URLs the W&B SDK uploads a run's files to and downloads them from: no credentials, the URL's signature
 * (made by {@link WandbRunFiles} for one run, one name and one method) stands for them.
 */
public class RunFilesUrlResource implements WandbRunFilesApi {

    @Inject
    WandbRunFiles runFiles;

    @Inject
    RunFiles files;

    @Inject
    FileDownloads downloads;

    @Override
    @AcceptsAnonymous
    public Response uploadRunFile(Long run, String name, Long expires, String signature, InputStream body) {
        runFiles.check("PUT", run, name, expires, signature);
        files.signedRun(run);
        files.store(run, name, body);
        return Response.ok(Map.of()).type(MediaType.APPLICATION_JSON_TYPE).build();
    }

    @Override
    @AcceptsAnonymous
    public Response downloadRunFileSigned(Long run, String name, Long expires, String signature, String range,
            String ifNoneMatch) {
        runFiles.check("GET", run, name, expires, signature);
        return RunFileAnswers.send(files, downloads, files.signedRun(run), name, range, ifNoneMatch);
    }
}
