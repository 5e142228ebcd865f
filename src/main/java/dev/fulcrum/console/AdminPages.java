package dev.fulcrum.console;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.RestForm;
import org.jboss.resteasy.reactive.RestPath;

import io.quarkus.qute.TemplateInstance;
import io.smallrye.common.annotation.Blocking;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.accounts.api.ApiKeysApi;
import dev.fulcrum.accounts.api.UsersApi;
import dev.fulcrum.accounts.api.model.ApiKeyCreate;
import dev.fulcrum.accounts.api.model.ApiKeyCreated;
import dev.fulcrum.accounts.api.model.User;
import dev.fulcrum.accounts.api.model.UserCreate;
import dev.fulcrum.inference.api.InferenceCatalogApi;
import dev.fulcrum.inference.api.model.InferenceBackend;
import dev.fulcrum.inference.api.model.InferenceCatalogModel;
import dev.fulcrum.inference.api.model.InferenceCatalogModelSettings;
import dev.fulcrum.platform.errors.ApiException;

/** Server administration: users (create, issue a first key) and the inference model catalog. */
@Path("/console/admin")
@AuthenticatesWithSession
@Blocking
public class AdminPages {

    private static final String PATH = "/console/admin";

    @Inject
    ConsoleRequest console;

    @Inject
    UsersApi users;

    @Inject
    ApiKeysApi apiKeys;

    @Inject
    InferenceCatalogApi catalog;

    @GET
    public Response admin() {
        return Pages.page(() -> page(null, null));
    }

    private TemplateInstance page(String keyFor, ApiKeyCreated created) {
        List<User> all = Pages.body(users.listUsers());
        List<InferenceCatalogModel> models = Pages.body(catalog.listCatalogModels());
        return ConsoleTemplates.admin(all, models, keyFor, created);
    }

    @POST
    @Path("/users")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response createUser(@RestForm String username, @RestForm String email, @RestForm String admin) {
        return Pages.act(console,
                () -> users.createUser(
                        new UserCreate().username(username).email(Pages.blankToNull(email)).admin(admin != null)),
                PATH, () -> page(null, null));
    }

    @POST
    @Path("/users/{username}/api-keys")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response issueKey(@RestPath String username, @RestForm String name) {
        try {
            ApiKeyCreated created = Pages.body(apiKeys.createUserApiKey(username, new ApiKeyCreate().name(name)));
            return Pages.html(201, page(username, created));
        } catch (ApiException e) {
            console.failed(e);
            return Pages.again(Pages.status(e), () -> page(null, null));
        }
    }

    @POST
    @Path("/models")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response createModel(@RestForm String id, @RestForm String backend, @RestForm("base_url") String baseUrl,
            @RestForm("api_key") String apiKey, @RestForm("upstream_model") String upstreamModel,
            @RestForm("gguf_path") String ggufPath, @RestForm String pull) {
        return Pages
                .act(console,
                        () -> catalog.createCatalogModel(new InferenceCatalogModelSettings().id(id)
                                .backend(backend(backend)).baseUrls(urls(baseUrl)).apiKey(Pages.blankToNull(apiKey))
                                .upstreamModel(Pages.blankToNull(upstreamModel)).ggufPath(Pages.blankToNull(ggufPath))
                                .pull(Pages.blankToNull(pull))),
                        PATH, () -> page(null, null));
    }

    /** A model's pull as the API answers it, for the models table's progress bars ({@code assets/models.js}). */
    @GET
    @Path("/models/{model}/pull.json")
    @Produces(MediaType.APPLICATION_JSON)
    public Response pullJson(@RestPath String model) {
        try {
            InferenceCatalogModel found = Pages.body(catalog.getCatalogModel(model));
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("pull", found.getPull());
            body.put("gguf_path", found.getGgufPath());
            return Response.ok(body).header("Cache-Control", "no-store").build();
        } catch (ApiException e) {
            return Response.status(Pages.status(e)).type(MediaType.APPLICATION_JSON)
                    .entity(Map.of("detail", e.getMessage())).header("Cache-Control", "no-store").build();
        }
    }

    /** The replicas' base URLs of the form's comma-separated list; null when it has none. */
    private static List<String> urls(String list) {
        List<String> urls = list == null ? List.of()
                : Arrays.stream(list.split(",")).map(String::strip).filter(url -> !url.isEmpty()).toList();
        return urls.isEmpty() ? null : urls;
    }

    private static InferenceBackend backend(String value) {
        try {
            return InferenceBackend.fromValue(value);
        } catch (IllegalArgumentException e) {
            throw new Pages.FormException("backend", "Choose a backend");
        }
    }

    @POST
    @Path("/models/{model}/delete")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response deleteModel(@RestPath String model) {
        return Pages.act(console, () -> catalog.deleteCatalogModel(model), PATH, () -> page(null, null));
    }
}
