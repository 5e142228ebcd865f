// A fast OpenAI-compatible stub for bench/inference.sh: every POST .../chat/completions gets the same canned
// completion (with usage). Run with the application's own Vert.x: java -cp "target/quarkus-app/lib/main/*" <this> PORT
//
// For bench/replicas.sh, a model server with a fixed service time: PORT SERVICE_MS [serial|parallel]
//   serial (the default)  one request at a time, in arrival order (a FIFO queue served by a chain of Vert.x timers):
//                         each request holds the server for SERVICE_MS, so it answers at most 1000/SERVICE_MS a second
//   parallel              every request answered SERVICE_MS after its body arrived, however many are waiting
// With PORT alone it answers at once, as above.
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;

public class InferenceStub {
    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        Buffer answer = Buffer.buffer("{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion\",\"created\":1700000000,"
                + "\"model\":\"echo\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                + "\"content\":\"Hello from the bench stub.\"},\"finish_reason\":\"stop\"}],"
                + "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7,\"total_tokens\":19}}");
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        var server = vertx.createHttpServer();
        if (args.length == 1) {
            server.requestHandler(request -> request.body().onSuccess(body -> request.response()
                    .putHeader("Content-Type", "application/json").end(answer)));
        } else {
            int serviceMs = Integer.parseInt(args[1]);
            String mode = args.length > 2 ? args[2] : "serial";
            if (serviceMs < 1 || !(mode.equals("serial") || mode.equals("parallel"))) {
                System.err.println("usage: InferenceStub PORT [SERVICE_MS (>= 1) [serial|parallel]]");
                System.exit(2);
            }
            if (mode.equals("serial")) {
                Serial serial = new Serial(vertx, answer, TimeUnit.MILLISECONDS.toNanos(serviceMs));
                server.requestHandler(request -> request.body().onSuccess(body -> serial.arrived(request)));
            } else {
                server.requestHandler(request -> request.body().onSuccess(body -> vertx.setTimer(serviceMs,
                        id -> request.response().putHeader("Content-Type", "application/json").end(answer))));
            }
            System.out.println("stub: " + mode + ", " + serviceMs + " ms a request");
        }
        server.listen(port, "127.0.0.1")
                .onSuccess(s -> System.out.println("stub listening on " + s.actualPort()))
                .onFailure(e -> {
                    e.printStackTrace();
                    System.exit(1);
                });
    }

    /**
     * One request at a time, in arrival order, each for a fixed service time. Everything runs on the one event loop.
     * A request's end is due one service time after the previous one's end (or after its arrival when the server was
     * idle), and a timer fires at that moment or, Vert.x's timers counting in milliseconds, a little later; the next
     * end is due from the previous due time, not from when the timer fired, so lateness does not add up and the server
     * serves 1000/SERVICE_MS requests a second while it has work. After a pause of more than one service time (a GC,
     * no CPU) it starts again from the moment it resumed rather than answering the backlog at once.
     */
    static final class Serial {
        private final Vertx vertx;
        private final Buffer answer;
        private final long serviceNanos;
        private final ArrayDeque<HttpServerRequest> queue = new ArrayDeque<>();
        private long due;

        Serial(Vertx vertx, Buffer answer, long serviceNanos) {
            this.vertx = vertx;
            this.answer = answer;
            this.serviceNanos = serviceNanos;
        }

        void arrived(HttpServerRequest request) {
            queue.add(request);
            if (queue.size() == 1) { // idle until now: its service starts
                due = System.nanoTime() + serviceNanos;
                arm();
            }
        }

        private void arm() {
            long millis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(due - System.nanoTime() + 999_999));
            vertx.setTimer(millis, id -> served());
        }

        private void served() {
            long now = System.nanoTime();
            while (!queue.isEmpty() && due - now <= 0) {
                HttpServerRequest request = queue.poll();
                if (!request.response().closed()) { // a client that gave up still held the server for its time
                    request.response().putHeader("Content-Type", "application/json").end(answer);
                }
                if (now - due > serviceNanos) {
                    due = now;
                }
                due += serviceNanos;
            }
            if (!queue.isEmpty()) {
                arm();
            }
        }
    }
}
