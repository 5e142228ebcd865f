package dev.fulcrum.inference.engine;

import io.vertx.core.Context;
import io.vertx.core.Vertx;

import dev.fulcrum.inference.Exchange;
import dev.fulcrum.inference.FairExecutor;
import dev.fulcrum.inference.InferenceFailure;

/**
 * A local engine's answer of several choices (chat's {@code n}, or text completions' prompts times {@code n}; or the
 * inputs of an embeddings request), generated one choice per turn of the engine's {@link FairExecutor}: after each
 * choice the request goes back to its project's queue, so another project's request waits for at most one choice of a
 * flood of {@code n x max_tokens} requests, not for all their choices. The turns of one answer run one after the other
 * (on any of the threads, each turn's events handed to the request's event loop before the next turn starts), so a
 * stream keeps its order; the client going away ends the answer before its next choice (the engines stop the current
 * one at their next token).
 */
public abstract class LocalChoices {

    private final Exchange exchange;
    private final int count;
    /** The event loop the request arrived on: the answer is written there. */
    private Context context;
    /** What the answer holds until it is over ({@link #hold}), or null. */
    private AutoCloseable held;
    /** The next choice, -1 before {@link #start}. */
    private int next = -1;

    protected LocalChoices(Exchange exchange, int count) {
        this.exchange = exchange;
        this.count = count;
    }

    /** In the first turn, before the first choice: loads the model, builds the prompt, starts a stream. */
    protected abstract void start();

    /** Generates choice {@code index} (streamed pieces go out as they come). */
    protected abstract void generate(int index);

    /** After the last choice, or when the client went away: ends the answer. */
    protected abstract void end();

    /** The error answered when the engine failed with {@code e} (logged here or by the caller). */
    protected abstract InferenceFailure failed(Throwable e);

    /**
     * Keeps {@code resource} (a model held loaded) until the answer is over: closed after the last turn, whether it
     * ended or failed, or when the engine stopped before a turn.
     */
    protected final <T extends AutoCloseable> T hold(T resource) {
        held = resource;
        return resource;
    }

    private void release() {
        AutoCloseable resource = held;
        held = null;
        if (resource != null) {
            try {
                resource.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** The request's event loop, where events are written. */
    protected final Context context() {
        return context;
    }

    /** Writes one {@code data:} event on the request's event loop (in the order of the calls). */
    protected final void emit(String event) {
        context.runOnContext(v -> exchange.event(event));
    }

    /**
     * Queues the answer on the engine's threads under the caller's project, a choice a turn (called on the request's
     * event loop); see {@link Exchange#queue}.
     */
    public final void queueOn(FairExecutor workers) {
        context = Vertx.currentContext();
        exchange.queue(workers, context, this::turn, this::release);
    }

    /** One turn: the start and the first choice, or the next choice; the end after the last. */
    private boolean turn() {
        try {
            if (next < 0) {
                start();
                next = 0;
            }
            if (next < count && !exchange.cancelled()) {
                generate(next++);
            }
            if (next < count && !exchange.cancelled()) {
                return true;
            }
            end();
        } catch (InferenceFailure failure) {
            exchange.failOn(context, failure);
        } catch (RuntimeException | LinkageError e) {
            exchange.failOn(context, failed(e));
        }
        release();
        return false;
    }
}
