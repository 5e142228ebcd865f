package dev.fulcrum.console;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.BeanParam;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.RestForm;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

import io.smallrye.common.annotation.Blocking;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.accounts.api.TeamsApi;
import dev.fulcrum.accounts.api.UsersApi;
import dev.fulcrum.accounts.api.model.Role;
import dev.fulcrum.accounts.api.model.Team;
import dev.fulcrum.accounts.api.model.User;
import dev.fulcrum.automations.api.ProjectAutomationsApi;
import dev.fulcrum.automations.api.model.Automation;
import dev.fulcrum.automations.api.model.AutomationCreate;
import dev.fulcrum.automations.api.model.AutomationList;
import dev.fulcrum.automations.api.model.AutomationUpdate;
import dev.fulcrum.automations.api.model.WebhookDeliveryPage;
import dev.fulcrum.platform.errors.ApiException;

/** The automations of a project (see {@link AutomationScreens}); project admins edit them. */
@Path("/console/projects/{entity}/{project}/automations")
@AuthenticatesWithSession
@Blocking
public class ProjectAutomationPages {

    @Inject
    AutomationScreens screens;

    @Inject
    ConsoleRequest console;

    @Inject
    ProjectAutomationsApi api;

    @Inject
    TeamsApi teams;

    @Inject
    UsersApi users;

    private AutomationScope scope(String entity, String project) {
        return new AutomationScope() {

            private Boolean editable;

            @Override
            public String getTitle() {
                return "project " + entity + "/" + project;
            }

            @Override
            public String path() {
                return "/console/projects/" + Pages.path(entity) + "/" + Pages.path(project) + "/automations";
            }

            @Override
            public boolean isEditable() {
                if (editable == null) {
                    editable = projectAdmin(entity);
                }
                return editable;
            }

            @Override
            public List<String> events() {
                return AutomationScreens.PROJECT_EVENTS;
            }

            @Override
            public List<Automation> list() {
                return Pages.<AutomationList> body(api.listProjectAutomations(entity, project)).getAutomations();
            }

            @Override
            public Automation get(long id) {
                return Pages.body(api.getProjectAutomation(entity, project, id));
            }

            @Override
            public Automation create(AutomationCreate body) {
                return Pages.body(api.createProjectAutomation(entity, project, body));
            }

            @Override
            public Automation update(long id, AutomationUpdate body) {
                return Pages.body(api.updateProjectAutomation(entity, project, id, body));
            }

            @Override
            public void delete(long id, String confirm) {
                api.deleteProjectAutomation(confirm, entity, project, id);
            }

            @Override
            public WebhookDeliveryPage deliveries(long id, String state, Integer limit, Long before,
                    String createdSince) {
                return Pages.body(
                        api.listProjectAutomationDeliveries(entity, project, id, state, limit, before, createdSince));
            }

            @Override
            public void redeliver(long id, long delivery) {
                api.redeliverProjectAutomationDelivery(entity, project, id, delivery);
            }

            @Override
            public void redeliverFailed(long id, String since) {
                api.redeliverFailedProjectAutomationDeliveries(since, entity, project, id);
            }
        };
    }

    /** Project admins are the admins of its entity: the user of a personal entity, a team's admins. */
    private boolean projectAdmin(String entity) {
        User me = Pages.body(users.getMe());
        if (me.getAdmin() || me.getEntity().equals(entity)) {
            return true;
        }
        try {
            return Pages.<Team> body(teams.getTeam(entity)).getRole() == Role.ADMIN;
        } catch (ApiException notATeamOfMine) {
            return false;
        }
    }

    @GET
    public Response list(@RestPath String entity, @RestPath String project) {
        return screens.list(scope(entity, project));
    }

    @GET
    @Path("/new")
    public Response newForm(@RestPath String entity, @RestPath String project, @RestQuery String event) {
        return screens.newForm(scope(entity, project), event);
    }

    @POST
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response create(@RestPath String entity, @RestPath String project, @BeanParam AutomationForm form) {
        return screens.create(scope(entity, project), form);
    }

    @GET
    @Path("/{id}")
    public Response edit(@RestPath String entity, @RestPath String project, @RestPath Long id, @RestQuery String state,
            @RestQuery Long before, @RestQuery("created_since") String createdSince) {
        return screens.edit(scope(entity, project), id, state, before, createdSince);
    }

    @POST
    @Path("/{id}")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response update(@RestPath String entity, @RestPath String project, @RestPath Long id,
            @BeanParam AutomationForm form) {
        return screens.update(scope(entity, project), id, form);
    }

    @POST
    @Path("/{id}/enable")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response enable(@RestPath String entity, @RestPath String project, @RestPath Long id) {
        return screens.setEnabled(scope(entity, project), id, true);
    }

    @POST
    @Path("/{id}/disable")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response disable(@RestPath String entity, @RestPath String project, @RestPath Long id) {
        return screens.setEnabled(scope(entity, project), id, false);
    }

    @POST
    @Path("/{id}/delete")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response delete(@RestPath String entity, @RestPath String project, @RestPath Long id,
            @RestForm String confirm) {
        return screens.delete(scope(entity, project), id, confirm);
    }

    @POST
    @Path("/{id}/deliveries/{delivery}/redeliver")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response redeliver(@RestPath String entity, @RestPath String project, @RestPath Long id,
            @RestPath Long delivery) {
        return screens.redeliver(scope(entity, project), id, delivery);
    }

    @POST
    @Path("/{id}/deliveries/redeliver-failed")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response redeliverFailed(@RestPath String entity, @RestPath String project, @RestPath Long id,
            @RestForm String since) {
        return screens.redeliverFailed(scope(entity, project), id, since);
    }
}
