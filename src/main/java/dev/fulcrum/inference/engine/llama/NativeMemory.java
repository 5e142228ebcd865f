package dev.fulcrum.inference.engine.llama;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;

/**
 * Gives freed native memory back to the operating system: llama.cpp's contexts and models free their buffers with
 * {@code free}, and glibc keeps freed heap for reuse, so without {@code malloc_trim} an unloaded model's compute
 * buffers would stay in the process's resident memory. Nothing on other C libraries (macOS frees to the system itself).
 */
final class NativeMemory {

    private static final Function TRIM = trimFunction();

    private NativeMemory() {
    }

    private static Function trimFunction() {
        if (!Platform.isLinux()) {
            return null;
        }
        try {
            return NativeLibrary.getInstance(Platform.C_LIBRARY_NAME).getFunction("malloc_trim");
        } catch (UnsatisfiedLinkError e) {
            return null; // not glibc (musl has no malloc_trim)
        }
    }

    static void trim() {
        if (TRIM != null) {
            TRIM.invokeInt(new Object[] { 0 });
        }
    }
}
