package dev.fulcrum.accounts;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.api.ProjectsApi;
import dev.fulcrum.accounts.api.model.ProjectCreate;

public class ProjectsResource implements ProjectsApi {

    @Inject
    Projects projects;

    @Override
    public Response listProjects(String entity) {
        return Response.ok(projects.list(entity).stream().map(p -> AccountsMapper.project(entity, p)).toList()).build();
    }

    @Override
    public Response createProject(String entity, ProjectCreate req) {
        Project project = projects.create(entity, req.getName(), req.getDescription());
        return Response.status(Response.Status.CREATED).entity(AccountsMapper.project(entity, project)).build();
    }

    @Override
    public Response getProject(String entity, String project) {
        return Response.ok(AccountsMapper.project(entity, projects.get(entity, project))).build();
    }

    @Override
    public Response deleteProject(String entity, String project) {
        projects.delete(entity, project);
        return Response.noContent().build();
    }
}
