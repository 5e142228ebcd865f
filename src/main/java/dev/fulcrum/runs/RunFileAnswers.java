package dev.fulcrum.runs;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.FileDownloads;
import dev.fulcrum.platform.http.QueryParams;
import dev.fulcrum.runs.RunFiles.RunFile;
import dev.fulcrum.runs.RunFiles.RunRef;
import dev.fulcrum.runs.api.model.MediaPage;
import dev.fulcrum.runs.api.model.MediaRow;
import dev.fulcrum.runs.api.model.RunFilePage;

/** The runs API's answers about a run's files and media (the operations of {@link RunsResource}). */
@ApplicationScoped
public class RunFileAnswers {

    @Inject
    RunFiles files;

    @Inject
    RunMedia media;

    @Inject
    FileDownloads downloads;

    Response listRunFiles(String entity, String project, String run, List<String> names, String after, Integer limit) {
        RunFiles.Page page = files.list(files.run(entity, project, run, Role.VIEWER), names, after, limit);
        return Response.ok(new RunFilePage().files(page.items().stream().map(RunFileAnswers::toFile).toList())
                .nextAfter(page.nextAfter()).total(page.total())).build();
    }

    Response downloadRunFile(String entity, String project, String run, String name, String range, String ifNoneMatch) {
        return send(files, downloads, files.run(entity, project, run, Role.VIEWER), name, range, ifNoneMatch);
    }

    /** A run file's download (output.log made from the run's console lines), with one {@code Range}. */
    public static Response send(RunFiles files, FileDownloads downloads, RunRef run, String name, String range,
            String ifNoneMatch) {
        RunFile file = files.file(run, name);
        if (RunFiles.OUTPUT.equals(name)) {
            byte[] bytes = files.outputBytes(run);
            RunFile output = files.withDigest(file, bytes);
            return downloads.send(view(output), (offset, length) -> RunFiles.slice(bytes, offset, length), range,
                    ifNoneMatch);
        }
        return downloads.send(view(file), (offset, length) -> files.open(file, offset, length), range, ifNoneMatch);
    }

    Response listRunMedia(String entity, String project, String run, Integer limit, Integer offset) {
        int size = QueryParams.limit(limit, 100, 1, RunFiles.MAX_LIMIT);
        int skip = QueryParams.offset(offset);
        List<RunMedia.MediaRow> rows = media.rows(files.run(entity, project, run, Role.VIEWER), size + 1, skip);
        return Response.ok(new MediaPage().rows(
                rows.stream().limit(size).map(row -> new MediaRow().step(row.step()).values(row.values())).toList())
                .nextOffset(rows.size() > size ? skip + size : null)).build();
    }

    private static FileView view(RunFile file) {
        return new FileView(file.name(), file.size(), file.digest(), file.contentType());
    }

    private static dev.fulcrum.runs.api.model.RunFile toFile(RunFile file) {
        return new dev.fulcrum.runs.api.model.RunFile().name(file.name()).size(file.size()).md5(file.md5())
                .contentType(file.contentType()).updatedAt(file.updatedAt());
    }
}
