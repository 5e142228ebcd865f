package dev.fulcrum.inference.engine.llama;

import org.jboss.logging.Logger;

import com.sun.jna.Pointer;

/**
 * llama.cpp's library log (the model, the context, decoding), routed to Fulcrum's log: its warnings and errors are
 * logged as {@code llama.cpp: ...}, cut to {@value #MAX_LINE} characters (a grammar it refuses is quoted whole); its
 * INFO and DEBUG lines (tensor by tensor) are not. Request text never reaches this log: the engine logs no prompt.
 */
final class LlamaLog {

    private static final Logger LOG = Logger.getLogger("dev.fulcrum.inference.engine.llama.llama.cpp");
    private static final int MAX_LINE = 300;
    private static final int WARN = 3;
    private static final int ERROR = 4;

    /** Held for the life of the process: the library keeps calling it. */
    static final LlamaApi.LogCallback CALLBACK = LlamaLog::log;

    private LlamaLog() {
    }

    private static void log(int level, Pointer text, Pointer userData) {
        if (level != WARN && level != ERROR || text == null) {
            return;
        }
        String line = LlamaNatives.string(text).strip();
        if (line.isEmpty() || line.contains("the full capacity of the model will not be utilized")) {
            // a context smaller than the model was trained for is a choice of the configuration, not a problem
            return;
        }
        if (line.length() > MAX_LINE) {
            line = line.substring(0, MAX_LINE) + "...";
        }
        if (level == ERROR) {
            LOG.errorf("llama.cpp: %s", line);
        } else {
            LOG.warnf("llama.cpp: %s", line);
        }
    }
}
