package dev.fulcrum.console;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.GZIPOutputStream;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import io.quarkus.qute.TemplateExtension;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * The console's stylesheets and scripts: its own ({@code /console/assets/}) and the charts' library
 * ({@code /webjars/uplot/}), read from the jar once and kept in memory as they are and gzipped. A browser that accepts
 * gzip gets the compressed bytes (about a third), others the plain ones, and neither is compressed again per request
 * ({@link ConsoleCompression} does the pages). The cache headers are those the static files had ({@value #CACHE}, and
 * the time this server started as {@code Last-Modified}), with an {@code ETag} per representation: a browser that asks
 * again with {@code If-None-Match} gets a 304. Any other path, or a file that is not there, goes on to the static
 * files' handler, which answers as before (404 for a missing file).
 */
@Singleton
public class ConsoleAssets {

    /** Where the console's own files are served. */
    private static final String OWN = "/console/assets/";
    /**
     * Where the files served here are: the console's own and the web jars'. Prefix routes, not a pattern: the router
     * tries these for every GET ahead of JAX-RS, the API's reads included.
     */
    private static final List<String> PREFIXES = List.of(OWN, "/webjars/");
    /** Where the static files are in the jar. */
    private static final String ROOT = "META-INF/resources";
    private static final String CACHE = "public, immutable, max-age=86400";
    private static final Map<String, String> TYPES = Map.of("css", "text/css;charset=UTF-8", "js",
            "text/javascript;charset=UTF-8");

    /** A file's two representations, each with its own entity tag. */
    private record Asset(String type, String version, Buffer plain, Buffer gzipped) {
        String plainTag() {
            return '"' + version + '"';
        }

        String gzippedTag() {
            return '"' + version + "-gzip\"";
        }
    }

    /**
     * The files found so far, by path (a miss is not kept: any name may be asked for); static, as the templates' URLs
     * ({@link #url}) read their versions from here.
     */
    private static final Map<String, Asset> ASSETS = new ConcurrentHashMap<>();
    private final String lastModified = DateTimeFormatter.RFC_1123_DATE_TIME
            .format(ZonedDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.SECONDS));

    void routes(@Observes Router router) {
        for (String prefix : PREFIXES) {
            router.route(prefix + "*").method(HttpMethod.GET).method(HttpMethod.HEAD).order(-100).handler(this::serve);
        }
    }

    private void serve(RoutingContext context) {
        String path = context.normalizedPath();
        Asset known = ASSETS.get(path);
        if (known != null) {
            answer(context, known);
            return;
        }
        if (!TYPES.containsKey(extension(path)) || path.contains("..") || path.contains("//")) {
            context.next(); // not a stylesheet or script: the static files' handler answers
            return;
        }
        context.vertx().executeBlocking(() -> ASSETS.computeIfAbsent(path, ConsoleAssets::load), false)
                .onComplete(loaded -> {
                    if (loaded.failed()) {
                        context.fail(loaded.cause());
                    } else if (loaded.result() == null) {
                        context.next();
                    } else {
                        answer(context, loaded.result());
                    }
                });
    }

    private void answer(RoutingContext context, Asset asset) {
        boolean gzip = ConsoleCompression.acceptsGzip(context.request().getHeader(HttpHeaders.ACCEPT_ENCODING));
        String tag = gzip ? asset.gzippedTag() : asset.plainTag();
        HttpServerResponse response = context.response().putHeader(HttpHeaders.CACHE_CONTROL, CACHE)
                .putHeader(HttpHeaders.LAST_MODIFIED, lastModified).putHeader(HttpHeaders.ETAG, tag)
                .putHeader(HttpHeaders.VARY, "Accept-Encoding");
        if (matches(context.request().getHeader(HttpHeaders.IF_NONE_MATCH), tag)) {
            response.setStatusCode(304).end();
            return;
        }
        response.putHeader(HttpHeaders.CONTENT_TYPE, asset.type());
        if (gzip) {
            response.putHeader(HttpHeaders.CONTENT_ENCODING, "gzip");
        }
        response.end(gzip ? asset.gzipped() : asset.plain());
    }

    /** Whether an {@code If-None-Match} header names the tag (weakly compared) or is {@code *}. */
    private static boolean matches(String header, String tag) {
        if (header == null) {
            return false;
        }
        for (String each : header.split(",")) {
            String candidate = each.strip();
            if (candidate.equals("*") || candidate.equals(tag) || candidate.equals("W/" + tag)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The URL of one of the console's own files, as the templates write it ({@code {asset:url('console.css')}}):
     * {@code /console/assets/<name>?v=<its entity tag>}. The file is served under {@value #CACHE}, which a browser may
     * keep for a day without asking; with the version in the URL, a page of an upgraded server names the changed file,
     * which the browser then fetches. The file is read once, for this and for serving it; serving ignores the query. A
     * name the jar does not hold fails the page.
     */
    @TemplateExtension(namespace = "asset")
    static String url(String name) {
        String path = OWN + name;
        Asset asset = ASSETS.computeIfAbsent(path, ConsoleAssets::load);
        if (asset == null) {
            throw new IllegalArgumentException("The console has no asset " + name);
        }
        return path + "?v=" + asset.version();
    }

    private static String extension(String path) {
        return path.substring(path.lastIndexOf('.') + 1);
    }

    /** The file at a path, or null when the jar has none. */
    private static Asset load(String path) {
        try (InputStream in = ConsoleAssets.class.getClassLoader().getResourceAsStream(ROOT + path)) {
            if (in == null) {
                return null;
            }
            byte[] plain = in.readAllBytes();
            ByteArrayOutputStream compressed = new ByteArrayOutputStream(plain.length / 2);
            try (GZIPOutputStream gzip = new GZIPOutputStream(compressed)) {
                gzip.write(plain);
            }
            String version = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(plain), 0, 12);
            return new Asset(TYPES.get(extension(path)), version, Buffer.buffer(plain),
                    Buffer.buffer(compressed.toByteArray()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
