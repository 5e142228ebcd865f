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
import dev.fulcrum.accounts.api.RegistriesApi;
import dev.fulcrum.accounts.api.model.Registry;
import dev.fulcrum.accounts.api.model.Role;
import dev.fulcrum.automations.api.RegistryAutomationsApi;
import dev.fulcrum.automations.api.model.Automation;
import dev.fulcrum.automations.api.model.AutomationCreate;
import dev.fulcrum.automations.api.model.AutomationList;
import dev.fulcrum.automations.api.model.AutomationUpdate;
import dev.fulcrum.automations.api.model.WebhookDeliveryPage;

/** The automations of a registry (see {@link AutomationScreens}); registry admins edit them. */
@Path("/console/registries/{registry}/automations")
@AuthenticatesWithSession
@Blocking
public class RegistryAutomationPages {

    @Inject
    AutomationScreens screens;

    @Inject
    ConsoleRequest console;

    @Inject
    RegistryAutomationsApi api;

    @Inject
    RegistriesApi registries;

    private AutomationScope scope(String registry) {
        return new AutomationScope() {

            private Boolean editable;

            @Override
            public String getTitle() {
                return "registry " + registry;
            }

            @Override
            public String path() {
                return "/console/registries/" + Pages.path(registry) + "/automations";
            }

            @Override
            public boolean isEditable() {
                if (editable == null) {
                    editable = registryAdmin(registry);
                }
                return editable;
            }

            @Override
            public List<String> events() {
                return AutomationScreens.REGISTRY_EVENTS;
            }

            @Override
            public List<Automation> list() {
                return Pages.<AutomationList> body(api.listRegistryAutomations(registry)).getAutomations();
            }

            @Override
            public Automation get(long id) {
                return Pages.body(api.getRegistryAutomation(registry, id));
            }

            @Override
            public Automation create(AutomationCreate body) {
                return Pages.body(api.createRegistryAutomation(registry, body));
            }

            @Override
            public Automation update(long id, AutomationUpdate body) {
                return Pages.body(api.updateRegistryAutomation(registry, id, body));
            }

            @Override
            public void delete(long id, String confirm) {
                api.deleteRegistryAutomation(confirm, registry, id);
            }

            @Override
            public WebhookDeliveryPage deliveries(long id, String state, Integer limit, Long before,
                    String createdSince) {
                return Pages
                        .body(api.listRegistryAutomationDeliveries(registry, id, state, limit, before, createdSince));
            }

            @Override
            public void redeliver(long id, long delivery) {
                api.redeliverRegistryAutomationDelivery(registry, id, delivery);
            }

            @Override
            public void redeliverFailed(long id, String since) {
                api.redeliverFailedRegistryAutomationDeliveries(since, registry, id);
            }
        };
    }

    private boolean registryAdmin(String registry) {
        return Pages.<Registry> body(registries.getRegistry(registry)).getRole() == Role.ADMIN;
    }

    @GET
    public Response list(@RestPath String registry) {
        return screens.list(scope(registry));
    }

    @GET
    @Path("/new")
    public Response newForm(@RestPath String registry, @RestQuery String event) {
        return screens.newForm(scope(registry), event);
    }

    @POST
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response create(@RestPath String registry, @BeanParam AutomationForm form) {
        return screens.create(scope(registry), form);
    }

    @GET
    @Path("/{id}")
    public Response edit(@RestPath String registry, @RestPath Long id, @RestQuery String state, @RestQuery Long before,
            @RestQuery("created_since") String createdSince) {
        return screens.edit(scope(registry), id, state, before, createdSince);
    }

    @POST
    @Path("/{id}")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response update(@RestPath String registry, @RestPath Long id, @BeanParam AutomationForm form) {
        return screens.update(scope(registry), id, form);
    }

    @POST
    @Path("/{id}/enable")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response enable(@RestPath String registry, @RestPath Long id) {
        return screens.setEnabled(scope(registry), id, true);
    }

    @POST
    @Path("/{id}/disable")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response disable(@RestPath String registry, @RestPath Long id) {
        return screens.setEnabled(scope(registry), id, false);
    }

    @POST
    @Path("/{id}/delete")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response delete(@RestPath String registry, @RestPath Long id, @RestForm String confirm) {
        return screens.delete(scope(registry), id, confirm);
    }

    @POST
    @Path("/{id}/deliveries/{delivery}/redeliver")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response redeliver(@RestPath String registry, @RestPath Long id, @RestPath Long delivery) {
        return screens.redeliver(scope(registry), id, delivery);
    }

    @POST
    @Path("/{id}/deliveries/redeliver-failed")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response redeliverFailed(@RestPath String registry, @RestPath Long id, @RestForm String since) {
        return screens.redeliverFailed(scope(registry), id, since);
    }
}
