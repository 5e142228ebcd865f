package dev.fulcrum.inference.engine.llama;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

import org.jboss.logging.Logger;

import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;

/**
 * Loads llama.cpp's native library from the {@code de.kherud:llama} jar once per process and binds its C API
 * ({@link LlamaApi}). The file is extracted to a directory of its own, and the bindings are pointed at the same file
 * ({@code de.kherud.llama.lib.path}), so their JNI (used only for its JSON-schema-to-grammar converter) and this engine
 * share one copy of llama.cpp. The library must be build {@value #BUILD} ({@value #COMMIT}): the struct layouts of
 * {@link LlamaApi} are that build's, and another build would read them wrong, so any other build is refused, as is a
 * library whose struct sizes or defaults are not those of that build. Windows' DLL exports only the bindings' JNI
 * functions, not the C API: there, and on any platform without a library, {@link #require()} says why.
 */
public final class LlamaNatives {

    private static final Logger LOG = Logger.getLogger(LlamaNatives.class);
    static final int BUILD = 4916;
    static final String COMMIT = "c6af2161";

    /** The loaded library's build and commit, or why it cannot be used; null before the first {@link #require}. */
    private static volatile Object state;

    /** A reason the engine cannot run in this process. */
    public static final class Unavailable extends RuntimeException {
        Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private LlamaNatives() {
    }

    /** Loads and checks the library on first call; throws {@link Unavailable} with the reason when it cannot. */
    public static void require() {
        Object loaded = state;
        if (loaded == null) {
            synchronized (LlamaNatives.class) {
                loaded = state;
                if (loaded == null) {
                    loaded = load();
                    state = loaded;
                }
            }
        }
        if (loaded instanceof Unavailable unavailable) {
            throw new Unavailable(unavailable.getMessage(), unavailable);
        }
    }

    /** The build number and commit the loaded library reports ({@code LLAMA_BUILD_NUMBER}, {@code LLAMA_COMMIT}). */
    public static String version() {
        require();
        return (String) state;
    }

    private static Object load() {
        try {
            Path file = extract();
            NativeLibrary library = NativeLibrary.getInstance(file.toString());
            int build = library.getGlobalVariableAddress("LLAMA_BUILD_NUMBER").getInt(0);
            String commit = library.getGlobalVariableAddress("LLAMA_COMMIT").getPointer(0).getString(0);
            if (build != BUILD || !commit.startsWith(COMMIT)) {
                return new Unavailable("llama.cpp's native library is build " + build + " (" + commit
                        + "); this engine is written for build " + BUILD + " (" + COMMIT + ")", null);
            }
            LlamaApi.register(library);
            checkLayouts();
            LlamaApi.llama_log_set(LlamaLog.CALLBACK, null);
            LlamaApi.llama_backend_init();
            LOG.infof("llama.cpp build %d (%s) loaded from %s", build, commit, file);
            return build + " " + commit;
        } catch (Unavailable e) {
            return e;
        } catch (UnsatisfiedLinkError | IOException | RuntimeException e) {
            LOG.warnf("llama.cpp's C API is not available on this server: %s", e.getMessage());
            return new Unavailable("llama.cpp's C API is not available on this server (" + Platform.RESOURCE_PREFIX
                    + "): " + e.getMessage(), e);
        }
    }

    /**
     * Refuses a library whose structs are not laid out as declared: JNA's sizes must be the build's, and the defaults
     * the library returns must read as that build's known defaults (a field off by a few bytes reads as garbage).
     */
    private static void checkLayouts() {
        int model = new LlamaApi.ModelParams().size();
        int context = new LlamaApi.ContextParams().size();
        int batch = new LlamaApi.BatchStruct().size();
        if (com.sun.jna.Native.POINTER_SIZE == 8 && (model != 64 || context != 120 || batch != 56)) {
            throw new Unavailable("llama.cpp's structs have unexpected sizes (model " + model + ", context " + context
                    + ", batch " + batch + ")", null);
        }
        LlamaApi.ModelParams m = LlamaApi.llama_model_default_params();
        LlamaApi.ContextParams c = LlamaApi.llama_context_default_params();
        boolean modelOk = m.use_mmap == 1 && m.use_mlock == 0 && m.vocab_only == 0 && m.main_gpu == 0
                && m.split_mode == 1;
        boolean contextOk = c.n_ctx == 512 && c.n_batch == 2048 && c.n_ubatch == 512 && c.n_seq_max == 1
                && c.yarn_orig_ctx == 0 && c.logits_all == 0 && c.embeddings == 0 && c.offload_kqv == 1 && c.type_k == 1
                && c.type_v == 1 && c.abort_callback == null && c.yarn_beta_fast == 32f && c.defrag_thold == -1f
                && c.no_perf == 1;
        if (!modelOk || !contextOk) {
            throw new Unavailable("llama.cpp's default parameters do not read as build " + BUILD + "'s", null);
        }
    }

    /** The library's file for this platform, copied out of the bindings' jar into a directory of this process. */
    private static Path extract() throws IOException {
        String os = Platform.isLinux() ? "Linux" : Platform.isMac() ? "Mac" : Platform.isWindows() ? "Windows" : null;
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        arch = switch (arch) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch;
        };
        String name = Platform.isWindows() ? "jllama.dll" : Platform.isMac() ? "libjllama.dylib" : "libjllama.so";
        String resource = "/de/kherud/llama/" + os + "/" + arch + "/" + name;
        String configured = System.getProperty("de.kherud.llama.lib.path");
        if (configured != null && Files.isRegularFile(Path.of(configured, name))) {
            return Path.of(configured, name);
        }
        Path directory = Files.createTempDirectory("fulcrum-llama");
        directory.toFile().deleteOnExit();
        Path file = directory.resolve(name);
        try (InputStream in = LlamaNatives.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("the llama.cpp bindings carry no library for " + os + " " + arch);
            }
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
        }
        file.toFile().deleteOnExit();
        System.setProperty("de.kherud.llama.lib.path", directory.toString());
        return file;
    }

    /** A NUL-terminated C string at {@code pointer} as UTF-8, or null. */
    static String string(Pointer pointer) {
        return pointer == null ? null : pointer.getString(0, "UTF-8");
    }
}
