package dev.fulcrum.console;

import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.zip.GZIPOutputStream;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.ext.Provider;
import jakarta.ws.rs.ext.WriterInterceptor;
import jakarta.ws.rs.ext.WriterInterceptorContext;

import io.vertx.core.http.HttpServerRequest;

import dev.fulcrum.accounts.AuthenticatesWithSession;

/**
 * Compresses the console's pages and the JSON its scripts read with gzip when the browser accepts it (about 270 KB of
 * HTML to 11 KB on a page of 200 automations, docs/console.md). Only the console's answers are compressed, here and in
 * {@link ConsoleAssets}: the HTTP server itself compresses nothing (no compressor in every connection's pipeline, which
 * cost the gateway about 2 % of its CPU per request, bench/README.md), and the API's and the gateway's answers never
 * are. A file the console passes through from the API's download (it has its own length, ranges and disposition) is
 * sent as it is.
 */
@Provider
@AuthenticatesWithSession
public class ConsoleCompression implements WriterInterceptor {

    private static final List<String> DOWNLOADS = List.of("Content-Disposition", "Content-Range", "Accept-Ranges");

    @Inject
    HttpServerRequest request;

    @Override
    public void aroundWriteTo(WriterInterceptorContext context) throws IOException {
        MultivaluedMap<String, Object> headers = context.getHeaders();
        if (!compressible(context.getMediaType()) || headers.containsKey(HttpHeaders.CONTENT_ENCODING)
                || DOWNLOADS.stream().anyMatch(headers::containsKey)) {
            context.proceed();
            return;
        }
        headers.add(HttpHeaders.VARY, HttpHeaders.ACCEPT_ENCODING);
        if (!acceptsGzip(request.getHeader(HttpHeaders.ACCEPT_ENCODING))) {
            context.proceed();
            return;
        }
        headers.putSingle(HttpHeaders.CONTENT_ENCODING, "gzip");
        headers.remove(HttpHeaders.CONTENT_LENGTH);
        GZIPOutputStream gzip = new GZIPOutputStream(context.getOutputStream(), 8192);
        context.setOutputStream(gzip);
        context.proceed();
        gzip.finish();
    }

    private static boolean compressible(MediaType type) {
        return type != null
                && (type.isCompatible(MediaType.TEXT_HTML_TYPE) || type.isCompatible(MediaType.APPLICATION_JSON_TYPE));
    }

    /**
     * Whether an {@code Accept-Encoding} header allows gzip: it names {@code gzip} (or {@code x-gzip}), or {@code *},
     * with a quality above zero, and does not refuse gzip by name ({@code gzip;q=0}).
     */
    static boolean acceptsGzip(String header) {
        if (header == null) {
            return false;
        }
        boolean any = false;
        for (String each : header.split(",")) {
            String[] parts = each.split(";");
            String coding = parts[0].strip().toLowerCase(Locale.ROOT);
            boolean allowed = quality(parts) > 0;
            if (coding.equals("gzip") || coding.equals("x-gzip")) {
                return allowed;
            }
            if (coding.equals("*")) {
                any = allowed;
            }
        }
        return any;
    }

    /** The {@code q} parameter of a coding (1 when absent; 0 when it is not a number). */
    private static double quality(String[] parts) {
        for (int i = 1; i < parts.length; i++) {
            String parameter = parts[i].strip();
            if (parameter.length() > 2 && (parameter.charAt(0) == 'q' || parameter.charAt(0) == 'Q')
                    && parameter.charAt(1) == '=') {
                try {
                    return Double.parseDouble(parameter.substring(2).strip());
                } catch (NumberFormatException e) {
                    return 0;
                }
            }
        }
        return 1;
    }
}
