package dev.fulcrum.artifacts;

import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;

/**
 * Answers a file download from the blob store: streamed, with {@code Content-Length}, the content digest as
 * {@code ETag}, {@code If-None-Match} and a single byte range ({@code bytes=a-b}, {@code a-}, {@code -n}). A 416 is
 * built here rather than by the exception mapper because it carries {@code Content-Range}.
 */
@ApplicationScoped
public class FileDownloads {

    private static final Pattern RANGE = Pattern.compile("bytes=(\\d*)-(\\d*)");
    private static final int BUFFER = 64 * 1024;

    @Inject
    BlobStore blobs;

    /** Reads {@code length} bytes of a file's content from {@code offset}. */
    public interface Content {
        InputStream open(long offset, long length) throws java.io.IOException;
    }

    public Response send(ArtifactViews.FileView file, String range, String ifNoneMatch) {
        return send(file, (offset, length) -> blobs.open(file.digest(), offset, length), range, ifNoneMatch);
    }

    /**
     * Answers a file whose bytes come from elsewhere than its blob (a run's {@code output.log}, made from its console
     * lines); {@code file.digest()} is its ETag.
     */
    public Response send(ArtifactViews.FileView file, Content content, String range, String ifNoneMatch) {
        String etag = "\"" + file.digest() + "\"";
        if (ifNoneMatch != null && (ifNoneMatch.trim().equals("*") || ifNoneMatch.contains(etag))) {
            return Response.notModified().header(HttpHeaders.ETAG, etag).build();
        }
        long size = file.size();
        long start = 0;
        long end = size - 1;
        boolean partial = false;
        Matcher m = range == null ? null : RANGE.matcher(range.trim());
        if (m != null && m.matches() && !(m.group(1).isEmpty() && m.group(2).isEmpty())) {
            if (size == 0) {
                // an empty file has no byte to send, whatever the range (RFC 9110, 14.1.1 and 15.5.17)
                return unsatisfiable(size);
            }
            try {
                if (m.group(1).isEmpty()) {
                    long suffix = Long.parseLong(m.group(2));
                    if (suffix == 0) {
                        return unsatisfiable(size);
                    }
                    start = Math.max(0, size - suffix);
                } else {
                    start = Long.parseLong(m.group(1));
                    if (!m.group(2).isEmpty()) {
                        end = Math.min(end, Long.parseLong(m.group(2)));
                    }
                    if (start >= size || end < start) {
                        return unsatisfiable(size);
                    }
                }
                partial = true;
            } catch (NumberFormatException e) {
                partial = false; // a number too large to be a position: answer the whole file
                start = 0;
                end = size - 1;
            }
        }
        long offset = start;
        long length = end - start + 1;
        StreamingOutput body = out -> {
            try (InputStream in = content.open(offset, length)) {
                byte[] buffer = new byte[BUFFER];
                int n;
                while ((n = in.read(buffer)) > 0) {
                    out.write(buffer, 0, n);
                }
            }
        };
        Response.ResponseBuilder response = Response.status(partial ? 206 : 200).entity(body)
                .type(FileTypes.served(file.contentType())).header(HttpHeaders.CONTENT_LENGTH, length)
                .header(HttpHeaders.ETAG, etag).header("Accept-Ranges", "bytes")
                .header("Content-Disposition", "attachment; filename=\"" + fileName(file.path()) + "\"");
        if (partial) {
            response.header("Content-Range", "bytes " + start + "-" + end + "/" + size);
        }
        return response.build();
    }

    private static Response unsatisfiable(long size) {
        Map<String, Object> problem = new LinkedHashMap<>();
        problem.put("type", "about:blank");
        problem.put("title", "Range Not Satisfiable");
        problem.put("status", 416);
        problem.put("detail", "The range lies outside the file of " + size + " bytes");
        return Response.status(416).type("application/problem+json").header("Content-Range", "bytes */" + size)
                .entity(problem).build();
    }

    private static String fileName(String path) {
        String name = path.substring(path.lastIndexOf('/') + 1);
        return name.replace("\"", "_").replaceAll("[^\\x20-\\x7e]", "_");
    }
}
