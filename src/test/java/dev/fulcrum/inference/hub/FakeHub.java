package dev.fulcrum.inference.hub;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A Hugging Face Hub for the tests, speaking what {@code huggingface_hub} and Fulcrum use: a revision's commit
 * ({@code /api/models/{repo}/revision/{rev}}), the file list ({@code /api/models/{repo}/tree/{commit}}, two entries a
 * page, the next page in the {@code Link} header), and {@code /{repo}/resolve/{commit}/{path}} answered with a 302 to a
 * second origin standing for the CDN (with {@code X-Repo-Commit}, {@code X-Linked-Etag}, {@code X-Linked-Size}), which
 * serves the bytes with {@code Range}. Errors carry {@code X-Error-Code} as the Hub's do. Every request is recorded
 * with its origin and {@code Authorization}; the CDN can hold a download at a byte, cut it there, or serve a file with
 * one byte changed.
 */
public final class FakeHub implements AutoCloseable {

    static final String TOKEN = "hf_fulcrum_test_token";
    private static final int PAGE = 2;

    public record Seen(String origin, String path, String authorization, String range) {
    }

    /** A file: its bytes (in memory or a file), its sha256 and whether the CDN corrupts one byte of it. */
    public record Blob(byte[] bytes, Path file, long size, String sha256, boolean corrupt) {
    }

    /** A repository: its commit and files by path; {@code access} {@code open}, {@code gated} or {@code private}. */
    public record Repo(String commit, Map<String, Blob> files, String access) {
    }

    private final HttpServer hub;
    private final HttpServer cdn;
    private final Map<String, Repo> repos = new ConcurrentHashMap<>();
    private final Map<String, Blob> bySha = new ConcurrentHashMap<>();
    private final Set<String> withoutLfs = ConcurrentHashMap.newKeySet();
    final List<Seen> seen = new CopyOnWriteArrayList<>();
    /** Bytes the CDN sent of each file, over every request. */
    final Map<String, AtomicLong> served = new ConcurrentHashMap<>();
    private volatile Hold hold;
    /** The CDN's speed in bytes a second (0: as fast as it goes). */
    private volatile long rate;

    /** The CDN stops sending a file at a byte until released; then cuts the connection or goes on. */
    public static final class Hold {
        final String sha256;
        final long at;
        final CountDownLatch reached = new CountDownLatch(1);
        final CountDownLatch released = new CountDownLatch(1);
        volatile boolean cut;

        Hold(String sha256, long at) {
            this.sha256 = sha256;
            this.at = at;
        }

        public void release(boolean cutIt) {
            cut = cutIt;
            released.countDown();
        }

        public boolean awaitReached() throws InterruptedException {
            return reached.await(60, TimeUnit.SECONDS);
        }
    }

    public FakeHub(int port) throws IOException {
        hub = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 16);
        cdn = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        hub.createContext("/", this::hub);
        cdn.createContext("/", this::cdn);
        hub.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
        cdn.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
        hub.start();
        cdn.start();
    }

    @Override
    public void close() {
        Hold held = hold;
        if (held != null) {
            held.release(true);
        }
        hub.stop(0);
        cdn.stop(0);
    }

    String cdnOrigin() {
        return "http://127.0.0.1:" + cdn.getAddress().getPort();
    }

    /** The repository's listing states no {@code lfs} for its files (as the Hub lists files kept in git itself). */
    public void withoutLfs(String name) {
        withoutLfs.add(name);
    }

    public void repo(String name, String access, Map<String, Blob> files) {
        repos.put(name, new Repo(sha256(name.getBytes(StandardCharsets.UTF_8)).substring(0, 40), files, access));
        files.values().forEach(blob -> bySha.put(blob.sha256(), blob));
    }

    public Hold holdAt(String sha256, long at) {
        Hold h = new Hold(sha256, at);
        hold = h;
        return h;
    }

    public void rate(long bytesPerSecond) {
        rate = bytesPerSecond;
    }

    public static Blob random(int size, long seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return new Blob(bytes, null, size, sha256(bytes), false);
    }

    static Blob corrupted(Blob blob) {
        return new Blob(blob.bytes(), blob.file(), blob.size(), blob.sha256(), true);
    }

    static Blob file(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[1 << 16];
            int n;
            while ((n = in.read(buffer)) > 0) {
                digest.update(buffer, 0, n);
            }
            return new Blob(null, file, Files.size(file), HexFormat.of().formatHex(digest.digest()), false);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static final Pattern REVISION = Pattern.compile("/api/models/([^/]+/[^/]+)/revision/([^/?]+)");
    private static final Pattern TREE = Pattern.compile("/api/models/([^/]+/[^/]+)/tree/([^/?]+)");
    private static final Pattern RESOLVE = Pattern.compile("/([^/]+/[^/]+)/resolve/([^/]+)/(.+)");

    private void hub(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        String auth = exchange.getRequestHeaders().getFirst("Authorization");
        seen.add(new Seen("hub", exchange.getRequestURI().toString(), auth, null));
        try (exchange) {
            Matcher m;
            if ((m = REVISION.matcher(path)).matches()) {
                Repo repo = access(exchange, m.group(1), auth);
                if (repo == null) {
                    return;
                }
                String rev = m.group(2);
                if (!rev.equals("main") && !rev.equals(repo.commit())) {
                    error(exchange, 404, "RevisionNotFound", "Invalid rev id: " + rev);
                    return;
                }
                json(exchange, 200, "{\"id\":\"" + m.group(1) + "\",\"sha\":\"" + repo.commit() + "\"}", null);
            } else if ((m = TREE.matcher(path)).matches()) {
                Repo repo = access(exchange, m.group(1), auth);
                if (repo == null) {
                    return;
                }
                String query = exchange.getRequestURI().getQuery();
                int cursor = query != null && query.contains("cursor=")
                        ? Integer.parseInt(query.substring(query.indexOf("cursor=") + 7))
                        : 0;
                List<String> paths = new ArrayList<>(new TreeMap<>(repo.files()).keySet());
                List<String> entries = new ArrayList<>();
                for (int i = cursor; i < Math.min(paths.size(), cursor + PAGE); i++) {
                    Blob blob = repo.files().get(paths.get(i));
                    String lfs = paths.get(i).endsWith(".gguf") && !withoutLfs.contains(m.group(1))
                            ? ",\"lfs\":{\"oid\":\"" + blob.sha256() + "\",\"size\":" + blob.size()
                                    + ",\"pointerSize\":134}"
                            : "";
                    entries.add("{\"type\":\"file\",\"oid\":\"" + blob.sha256().substring(0, 40) + "\",\"size\":"
                            + blob.size() + ",\"path\":\"" + paths.get(i) + "\"" + lfs + "}");
                }
                String link = cursor + PAGE < paths.size() ? "<http://127.0.0.1:" + hub.getAddress().getPort() + path
                        + "?recursive=true&cursor=" + (cursor + PAGE) + ">; rel=\"next\"" : null;
                json(exchange, 200, "[" + String.join(",", entries) + "]", link);
            } else if ((m = RESOLVE.matcher(path)).matches()) {
                Repo repo = access(exchange, m.group(1), auth);
                if (repo == null) {
                    return;
                }
                Blob blob = repo.files().get(m.group(3));
                if (blob == null || !m.group(2).equals(repo.commit())) {
                    error(exchange, 404, "EntryNotFound", "Entry not found");
                    return;
                }
                exchange.getResponseHeaders().add("Location", cdnOrigin() + "/blobs/" + blob.sha256() + "?sig=x");
                exchange.getResponseHeaders().add("X-Repo-Commit", repo.commit());
                exchange.getResponseHeaders().add("X-Linked-Etag", "\"" + blob.sha256() + "\"");
                exchange.getResponseHeaders().add("X-Linked-Size", String.valueOf(blob.size()));
                exchange.getResponseHeaders().add("ETag", "\"" + blob.sha256().substring(0, 40) + "\"");
                exchange.sendResponseHeaders(302, -1);
            } else {
                error(exchange, 404, null, "Not found");
            }
        }
    }

    /** The repository if the caller may read it; otherwise answers as the Hub does and returns null. */
    private Repo access(HttpExchange exchange, String name, String auth) throws IOException {
        Repo repo = repos.get(name);
        boolean token = ("Bearer " + TOKEN).equals(auth);
        if (repo == null || "private".equals(repo.access())) {
            error(exchange, 401, "RepoNotFound", "Repository not found");
            return null;
        }
        if ("gated".equals(repo.access())) {
            error(exchange, token ? 403 : 401, "GatedRepo",
                    "Access to model " + name + " is restricted and you are not in the authorized list");
            return null;
        }
        return repo;
    }

    private static void error(HttpExchange exchange, int status, String code, String message) throws IOException {
        if (code != null) {
            exchange.getResponseHeaders().add("X-Error-Code", code);
        }
        exchange.getResponseHeaders().add("X-Error-Message", message);
        json(exchange, status, "{\"error\":\"" + message + "\"}", null);
    }

    private static void json(HttpExchange exchange, int status, String body, String link) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        if (link != null) {
            exchange.getResponseHeaders().add("Link", link);
        }
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    private void cdn(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        String range = exchange.getRequestHeaders().getFirst("Range");
        seen.add(new Seen("cdn", exchange.getRequestURI().toString(),
                exchange.getRequestHeaders().getFirst("Authorization"), range));
        try (exchange) {
            Blob blob = path.startsWith("/blobs/") ? bySha.get(path.substring(7)) : null;
            if (blob == null) {
                exchange.sendResponseHeaders(404, -1);
                return;
            }
            long from = 0;
            if (range != null) {
                Matcher m = Pattern.compile("bytes=(\\d+)-").matcher(range);
                if (m.matches()) {
                    from = Long.parseLong(m.group(1));
                }
            }
            if (from >= blob.size()) {
                exchange.getResponseHeaders().add("Content-Range", "bytes */" + blob.size());
                exchange.sendResponseHeaders(416, -1);
                return;
            }
            exchange.getResponseHeaders().add("Content-Type", "application/octet-stream");
            exchange.getResponseHeaders().add("ETag", "\"" + blob.sha256() + "\"");
            if (from > 0) {
                exchange.getResponseHeaders().add("Content-Range",
                        "bytes " + from + "-" + (blob.size() - 1) + "/" + blob.size());
                exchange.sendResponseHeaders(206, blob.size() - from);
            } else {
                exchange.sendResponseHeaders(200, blob.size());
            }
            send(exchange.getResponseBody(), blob, from);
        } catch (IOException e) {
            // the client went away, or the cut: nothing more to send
        }
    }

    private void send(OutputStream out, Blob blob, long from) throws IOException {
        AtomicLong count = served.computeIfAbsent(blob.sha256(), k -> new AtomicLong());
        byte[] buffer = new byte[1 << 16];
        try (RandomAccessFile file = blob.file() == null ? null : new RandomAccessFile(blob.file().toFile(), "r")) {
            long at = from;
            while (at < blob.size()) {
                Hold held = hold;
                long end = blob.size();
                if (held != null && held.sha256.equals(blob.sha256()) && at < held.at) {
                    end = held.at;
                }
                int n = (int) Math.min(buffer.length, end - at);
                if (blob.bytes() != null) {
                    System.arraycopy(blob.bytes(), (int) at, buffer, 0, n);
                } else {
                    file.seek(at);
                    file.readFully(buffer, 0, n);
                }
                if (blob.corrupt() && at <= blob.size() / 2 && blob.size() / 2 < at + n) {
                    buffer[(int) (blob.size() / 2 - at)] ^= 0x01;
                }
                out.write(buffer, 0, n);
                count.addAndGet(n);
                at += n;
                long limit = rate;
                if (limit > 0) {
                    try {
                        Thread.sleep(n * 1000L / limit);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
                if (held != null && held.sha256.equals(blob.sha256()) && at == held.at) {
                    out.flush();
                    hold = null;
                    held.reached.countDown();
                    try {
                        held.released.await(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    if (held.cut) {
                        throw new IOException("cut");
                    }
                }
            }
        }
    }
}
