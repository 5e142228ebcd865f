// The least a gateway on the JVM does, for bench/inference.sh: a plain reverse proxy on Vert.x (the HTTP server and
// client Fulcrum runs on, one verticle per core like Fulcrum's event loops, kept-alive connections to the upstream), no
// key, no JSON, no metrics. Run with the application's own Vert.x:
//   java -cp "target/quarkus-app/lib/main/*" <this> PORT UPSTREAM_PORT
import io.vertx.core.AbstractVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.PoolOptions;

public class BareProxy {
    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        int upstream = Integer.parseInt(args[1]);
        int cores = Runtime.getRuntime().availableProcessors();
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(cores));
        vertx.deployVerticle(() -> new AbstractVerticle() {
            @Override
            public void start() {
                HttpClient client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true)
                        .setTcpNoDelay(true), new PoolOptions().setHttp1MaxSize(64));
                vertx.createHttpServer(new HttpServerOptions().setTcpNoDelay(true)).requestHandler(request -> request
                        .body().onSuccess(body -> client.request(HttpMethod.POST, upstream, "127.0.0.1", request.uri())
                                .onSuccess(sent -> sent.putHeader("Content-Type", "application/json").send(body)
                                        .onSuccess(answer -> answer.body().onSuccess(bytes -> request.response()
                                                .setStatusCode(answer.statusCode())
                                                .putHeader("Content-Type", "application/json").end(bytes))))))
                        .listen(port, "127.0.0.1");
            }
        }, new DeploymentOptions().setInstances(cores)).onSuccess(id -> System.out.println("proxy listening on " + port))
                .onFailure(e -> {
                    e.printStackTrace();
                    System.exit(1);
                });
    }
}
