package dev.fulcrum.inference;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;

/**
 * One request of the gateway on its way (a chat or text completion, embeddings): the model, who it is counted for, and
 * the client's response. Backends write the answer through it and call {@link #finish} once; closing the connection
 * early cancels. The subclasses add the checked request.
 */
public abstract class Exchange {

    private static final Buffer DONE = Buffer.buffer("data: [DONE]\n\n");

    /** How a request ended: the status answered (499 when the client went away) and the tokens used. */
    public record Outcome(int status, int promptTokens, int completionTokens) {
    }

    private final RoutingContext context;
    /** The model answering: the one asked for, or a fallback of it ({@link #answerAs}). */
    private volatile ServedModel model;
    private final InferenceCaller caller;
    private final Consumer<Outcome> onFinish;
    private volatile Consumer<Outcome> alsoOnFinish = outcome -> {
    };
    private final AtomicBoolean finished = new AtomicBoolean();
    private volatile boolean cancelled;
    private volatile Runnable onCancel = () -> {
    };
    /** {@link System#nanoTime} when the first content went to the client, 0 before. */
    private volatile long firstTokenAt;
    /** Who may take over a failure met before anything of the answer went out; consumed when asked. */
    private Rescue rescue;
    /** A failure held back for {@link #rescue} until its attempt finishes. */
    private InferenceFailure deferred;

    /**
     * Takes over a failure met before anything of the answer went to the client: another replica of the model server (a
     * retry) or a fallback model. Asked once the failed attempt has finished; true when it answers the exchange itself
     * (the attempt's outcome is then not recorded), false to let the failure go to the client.
     */
    @FunctionalInterface
    public interface Rescue {
        boolean take(InferenceFailure failure);
    }

    Exchange(RoutingContext context, ServedModel model, InferenceCaller caller, Consumer<Outcome> onFinish) {
        this.context = context;
        this.model = model;
        this.caller = caller;
        this.onFinish = onFinish;
        context.response().closeHandler(v -> {
            if (!context.response().ended()) {
                cancelled = true;
                onCancel.run();
                finish(new Outcome(499, 0, 0));
            }
        });
    }

    /** Whether the answer is a stream (the in-flight gauge and time to first token are kept apart). */
    public abstract boolean stream();

    public ServedModel model() {
        return model;
    }

    /**
     * From now on {@code fallback} answers (its id is the answer's {@code model}); says so in the response header
     * {@code Fulcrum-Fallback-From}, naming the model asked for.
     */
    public void answerAs(ServedModel fallback, String askedFor) {
        this.model = fallback;
        response().headers().set("Fulcrum-Fallback-From", askedFor);
    }

    /**
     * Registers who is asked about the next failure met before anything of the answer went out, replacing any other (a
     * rescue that wants the one before it asked too calls it itself). Returns the one it replaces, or null.
     */
    public Rescue rescueWith(Rescue next) {
        Rescue previous = rescue;
        rescue = next;
        return previous;
    }

    public InferenceCaller caller() {
        return caller;
    }

    /**
     * Runs this answer's work on a local engine's threads, queued fairly under the caller's project, handing it the
     * event loop the request arrived on; a full queue answers 429 (the engine is at capacity), and an engine stopped
     * before the work's turn (its model left the catalog) 503.
     */
    public void runOn(FairExecutor workers, Consumer<Context> work) {
        Context context = Vertx.currentContext();
        queue(workers, context, () -> {
            work.accept(context);
            return false;
        }, () -> {
        });
    }

    /**
     * Queues work on a local engine's threads under the caller's project, one {@code turn} at a time ({@code turn}
     * answers whether another follows; see {@link FairExecutor#executeInTurns}); a full queue answers 429 at once, an
     * engine stopped before a turn 503 on the event loop {@code context}, after {@code onDropped}.
     */
    public void queue(FairExecutor workers, Context context, BooleanSupplier turn, Runnable onDropped) {
        try {
            workers.executeInTurns(FairExecutor.projectKey(caller.entity(), caller.project()),
                    new FairExecutor.Turns() {
                        @Override
                        public boolean next() {
                            return turn.getAsBoolean();
                        }

                        @Override
                        public void dropped() {
                            onDropped.run();
                            failOn(context, InferenceFailure.engineStopped(model.id()));
                        }
                    });
        } catch (RejectedExecutionException e) {
            InferenceFailure busy = InferenceFailure.atCapacity(model.id());
            fail(busy);
            finish(new Outcome(busy.status(), 0, 0));
        }
    }

    /** Answers the failure and ends the exchange, on the event loop {@code context} (from an engine's thread). */
    public void failOn(Context context, InferenceFailure failure) {
        context.runOnContext(v -> {
            fail(failure);
            finish(new Outcome(failure.status(), 0, 0));
        });
    }

    /** The client's response; write through the methods below unless passing bytes through. */
    public HttpServerResponse response() {
        return context.response();
    }

    public boolean cancelled() {
        return cancelled;
    }

    /** What to do when the client goes away before the answer is complete (e.g. reset the upstream request). */
    public void onCancel(Runnable action) {
        this.onCancel = action;
        if (cancelled) {
            action.run();
        }
    }

    /** Answers a JSON body. */
    public void json(int status, Buffer body) {
        if (cancelled || response().ended()) {
            return;
        }
        response().setStatusCode(status).putHeader("Content-Type", "application/json").end(body);
    }

    /** Starts a Server-Sent Events answer. */
    public void startStream() {
        response().setStatusCode(200).setChunked(true).putHeader("Content-Type", "text/event-stream")
                .putHeader("Cache-Control", "no-cache").putHeader("X-Accel-Buffering", "no");
    }

    /** Notes that the first content of the answer goes to the client now (the time to first token). */
    public void firstToken() {
        if (firstTokenAt == 0) {
            firstTokenAt = System.nanoTime();
        }
    }

    /** {@link System#nanoTime} when the first content went to the client, 0 when none did. */
    public long firstTokenAt() {
        return firstTokenAt;
    }

    /** Writes one {@code data:} event holding that JSON. */
    public void event(String json) {
        if (cancelled || response().ended()) {
            return;
        }
        firstToken();
        response()
                .write(Buffer.buffer(json.length() + 8).appendString("data: ").appendString(json).appendString("\n\n"));
    }

    /**
     * Writes one Server-Sent Event as an upstream sent it ({@code data: ...} or other fields), without its blank line.
     */
    public void passThrough(String event) {
        if (cancelled || response().ended()) {
            return;
        }
        response().write(Buffer.buffer(event.length() + 2).appendString(event).appendString("\n\n"));
    }

    /** Ends a stream without {@code data: [DONE]} (the Responses API's streams have none). */
    public void endStream() {
        if (cancelled || response().ended()) {
            return;
        }
        response().end();
    }

    /** Ends a stream with {@code data: [DONE]}. */
    public void done() {
        if (cancelled || response().ended()) {
            return;
        }
        response().end(DONE);
    }

    /**
     * Answers an error: the OpenAI error object with its status, or, when a stream has begun, an error event before the
     * end.
     */
    public void fail(InferenceFailure failure) {
        if (cancelled || response().ended()) {
            return;
        }
        if (rescue != null && deferred == null && !response().headWritten()) {
            deferred = failure; // the rescue is asked when the failed attempt finishes
            return;
        }
        if (response().headWritten()) {
            response().end(Buffer.buffer("data: ").appendBuffer(OpenAiErrors.body(failure)).appendString("\n\n"));
        } else {
            OpenAiErrors.write(response(), failure);
        }
    }

    /**
     * Ends the completion now because this replica shuts down: the error is answered (as an error event when a stream
     * has begun), the backend's work is cancelled as if the client had gone, and the outcome is recorded with the
     * error's status. Nothing happens once the answer is complete.
     */
    public void interrupt(InferenceFailure failure) {
        if (cancelled || response().ended()) {
            return;
        }
        rescue = null;
        deferred = null;
        fail(failure);
        cancelled = true;
        onCancel.run();
        finish(new Outcome(failure.status(), 0, 0));
    }

    /** Also tells {@code listener} the outcome when the exchange finishes (a backend's own bookkeeping). */
    public void whenFinished(Consumer<Outcome> listener) {
        alsoOnFinish = alsoOnFinish.andThen(listener);
    }

    /** Records the outcome (once; later calls are ignored). */
    public void finish(Outcome outcome) {
        InferenceFailure failed = deferred;
        if (failed != null) {
            deferred = null;
            Rescue asked = rescue;
            rescue = null;
            if (!cancelled && asked.take(failed)) {
                return; // an attempt that another answers instead
            }
            fail(failed);
        }
        if (finished.compareAndSet(false, true)) {
            onFinish.accept(outcome);
            alsoOnFinish.accept(outcome);
        }
    }
}
