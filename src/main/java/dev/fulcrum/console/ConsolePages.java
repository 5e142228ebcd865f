package dev.fulcrum.console;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.NewCookie;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;

import org.jboss.resteasy.reactive.RestForm;
import org.jboss.resteasy.reactive.RestPath;

import io.smallrye.common.annotation.Blocking;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.accounts.ConsoleSessions;
import dev.fulcrum.accounts.api.ApiKeysApi;
import dev.fulcrum.accounts.api.ProjectsApi;
import dev.fulcrum.accounts.api.RegistriesApi;
import dev.fulcrum.accounts.api.TeamsApi;
import dev.fulcrum.accounts.api.UsersApi;
import dev.fulcrum.accounts.api.model.ApiKey;
import dev.fulcrum.accounts.api.model.ApiKeyCreate;
import dev.fulcrum.accounts.api.model.ApiKeyCreated;
import dev.fulcrum.accounts.api.model.Project;
import dev.fulcrum.accounts.api.model.ProjectCreate;
import dev.fulcrum.accounts.api.model.Registry;
import dev.fulcrum.accounts.api.model.RegistryCreate;
import dev.fulcrum.accounts.api.model.Team;
import dev.fulcrum.accounts.api.model.TeamCreate;
import dev.fulcrum.accounts.api.model.User;
import dev.fulcrum.platform.errors.ApiException;

/**
 * The console's sign-in, sign-out, home and account pages. Like every console page they call the operations of the
 * published API (the generated interfaces of openapi/*.yaml) and nothing else.
 */
@Path("/console")
@AuthenticatesWithSession
@Blocking
public class ConsolePages {

    static final String HOME = "/console/";
    static final String SIGN_IN = "/console/sign-in";

    @Inject
    ConsoleSessions sessions;

    @Inject
    ConsoleRequest console;

    @Inject
    UsersApi users;

    @Inject
    TeamsApi teams;

    @Inject
    RegistriesApi registries;

    @Inject
    ProjectsApi projects;

    @Inject
    ApiKeysApi apiKeys;

    @Inject
    UriInfo uri;

    @GET
    @Path("/sign-in")
    @SignedOut
    public Response signInPage() {
        if (console.isSignedIn()) {
            return Pages.seeOther(HOME);
        }
        return Pages.html(ConsoleTemplates.signIn());
    }

    @POST
    @Path("/sign-in")
    @SignedOut
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response signIn(@RestForm("api_key") String apiKey) {
        return sessions.signIn(apiKey).map(token -> Response.seeOther(URI.create(HOME))
                .cookie(cookie(token, (int) sessions.lifetime().toSeconds())).build()).orElseGet(() -> {
                    console.failed("That API key is unknown or revoked.");
                    return Pages.html(401, ConsoleTemplates.signIn());
                });
    }

    @POST
    @Path("/sign-out")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response signOut() {
        sessions.signOut(console.session());
        return Response.seeOther(URI.create(SIGN_IN)).cookie(cookie("", 0)).build();
    }

    private NewCookie cookie(String value, int maxAge) {
        return new NewCookie.Builder(ConsoleSessions.COOKIE).value(value).path("/console").maxAge(maxAge).httpOnly(true)
                .secure("https".equals(uri.getRequestUri().getScheme())).sameSite(NewCookie.SameSite.STRICT).build();
    }

    /** Who I am, my teams and registries with my role, and the projects I can see. */
    @GET
    @Path("/")
    public Response home() {
        return Pages.page(this::homePage);
    }

    private io.quarkus.qute.TemplateInstance homePage() {
        User me = Pages.body(users.getMe());
        List<Team> myTeams = Pages.body(teams.listTeams());
        List<Registry> myRegistries = Pages.body(registries.listRegistries());
        List<Project> visible = new ArrayList<>(Pages.<List<Project>> body(projects.listProjects(me.getEntity())));
        for (Team team : myTeams) {
            visible.addAll(Pages.<List<Project>> body(projects.listProjects(team.getName())));
        }
        return ConsoleTemplates.home(me, myTeams, myRegistries, visible);
    }

    @POST
    @Path("/teams")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response createTeam(@RestForm String name) {
        return Pages.act(console, () -> teams.createTeam(new TeamCreate().name(name)),
                "/console/teams/" + Pages.path(name == null ? "" : name), this::homePage);
    }

    @POST
    @Path("/registries")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response createRegistry(@RestForm String name, @RestForm String description) {
        return Pages.act(console,
                () -> registries
                        .createRegistry(new RegistryCreate().name(name).description(Pages.blankToNull(description))),
                HOME, this::homePage);
    }

    @POST
    @Path("/projects")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response createProject(@RestForm String entity, @RestForm String name, @RestForm String description) {
        return Pages.act(console,
                () -> projects.createProject(entity,
                        new ProjectCreate().name(name).description(Pages.blankToNull(description))),
                HOME, this::homePage);
    }

    /** My API keys; a key just created is shown this once. */
    @GET
    @Path("/account")
    public Response account() {
        return Pages.page(() -> accountPage(null));
    }

    private io.quarkus.qute.TemplateInstance accountPage(ApiKeyCreated created) {
        List<ApiKey> keys = Pages.body(apiKeys.listApiKeys());
        return ConsoleTemplates.account(keys, created);
    }

    @POST
    @Path("/account/api-keys")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response createKey(@RestForm String name) {
        try {
            ApiKeyCreated created = Pages.body(apiKeys.createApiKey(new ApiKeyCreate().name(name)));
            return Pages.html(201, accountPage(created));
        } catch (ApiException e) {
            console.failed(e);
            return Pages.again(Pages.status(e), () -> accountPage(null));
        }
    }

    @POST
    @Path("/account/api-keys/{id}/revoke")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response revokeKey(@RestPath Long id) {
        return Pages.act(console, () -> apiKeys.revokeApiKey(id), "/console/account", () -> accountPage(null));
    }
}
