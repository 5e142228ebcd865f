package dev.fulcrum.support;

import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import io.agroal.api.AgroalPoolInterceptor;

/**
 * Counts the pooled connections taken while serving requests (every database round trip of a request takes one:
 * Hibernate's, {@code NativeSql}'s and the hot paths' plain JDBC alike), registered with the datasource as every CDI
 * {@link AgroalPoolInterceptor} is. A taking counts when its stack runs through the JAX-RS request handling or the chat
 * route's caller check; background work (the webhook dispatcher, the executors, the catalog refresh, the usage writer)
 * does not. Off unless a test is counting, so that other tests pay nothing.
 */
@ApplicationScoped
public class RequestConnections implements AgroalPoolInterceptor {

    private static final String[] REQUEST_FRAMES = { "org.jboss.resteasy.reactive.server.",
            "dev.fulcrum.inference.gateway.InferenceCallers", "dev.fulcrum.inference.gateway.ChatCompletions",
            "dev.fulcrum.inference.gateway.Gateway" };

    private volatile boolean counting;
    private final List<String> taken = new ArrayList<>();

    @Override
    public void onConnectionAcquire(java.sql.Connection connection) {
        if (!counting) {
            return;
        }
        StackTraceElement[] stack = new Throwable().getStackTrace();
        for (StackTraceElement frame : stack) {
            for (String request : REQUEST_FRAMES) {
                if (isFrameOf(frame.getClassName(), request)) {
                    synchronized (taken) {
                        taken.add(where(stack));
                    }
                    return;
                }
            }
        }
    }

    /**
     * Whether the frame's class is {@code request}: a package (ending in a dot), or a class itself, its nested classes
     * or its generated subclasses ({@code Gateway}, not {@code GatewayStatements}).
     */
    static boolean isFrameOf(String className, String request) {
        if (request.endsWith(".")) {
            return className.startsWith(request);
        }
        return className.equals(request) || className.startsWith(request + "$") || className.startsWith(request + "_");
    }

    /** Fulcrum's own frames, innermost first: where the connection was taken and for what. */
    private static String where(StackTraceElement[] stack) {
        StringBuilder frames = new StringBuilder();
        for (StackTraceElement frame : stack) {
            if (frame.getClassName().startsWith("dev.fulcrum.")
                    && !frame.getClassName().startsWith("dev.fulcrum.support")) {
                frames.append(frames.isEmpty() ? "" : " < ").append(frame.getClassName()).append('.')
                        .append(frame.getMethodName());
            }
        }
        return frames.toString();
    }

    public void start() {
        synchronized (taken) {
            taken.clear();
        }
        counting = true;
    }

    /** Stops counting; where each connection was taken since {@link #start()}. */
    public List<String> stop() {
        counting = false;
        synchronized (taken) {
            return List.copyOf(taken);
        }
    }
}
