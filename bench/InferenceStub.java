// A fast OpenAI-compatible stub for bench/inference.sh: every POST .../chat/completions gets the same canned
// completion (with usage). Run with the application's own Vert.x: java -cp "target/quarkus-app/lib/main/*" <this> PORT
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;

public class InferenceStub {
    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        Buffer answer = Buffer.buffer("{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion\",\"created\":1700000000,"
                + "\"model\":\"echo\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                + "\"content\":\"Hello from the bench stub.\"},\"finish_reason\":\"stop\"}],"
                + "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7,\"total_tokens\":19}}");
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        vertx.createHttpServer().requestHandler(request -> request.body().onSuccess(body -> request.response()
                .putHeader("Content-Type", "application/json").end(answer))).listen(port, "127.0.0.1")
                .onSuccess(server -> System.out.println("stub listening on " + server.actualPort()))
                .onFailure(e -> {
                    e.printStackTrace();
                    System.exit(1);
                });
    }
}
