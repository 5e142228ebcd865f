package dev.fulcrum.datasets;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.datasets.api.ObjectsApi;
import dev.fulcrum.datasets.api.model.ObjCreateReq;
import dev.fulcrum.datasets.api.model.ObjCreateRes;
import dev.fulcrum.datasets.api.model.ObjDeleteReq;
import dev.fulcrum.datasets.api.model.ObjDeleteRes;
import dev.fulcrum.datasets.api.model.ObjQueryReq;
import dev.fulcrum.datasets.api.model.ObjQueryRes;
import dev.fulcrum.datasets.api.model.ObjReadReq;
import dev.fulcrum.datasets.api.model.ObjReadRes;
import dev.fulcrum.datasets.api.model.ObjSchema;
import dev.fulcrum.datasets.api.model.ObjectVersionFilter;
import dev.fulcrum.datasets.api.model.RefsReadBatchReq;
import dev.fulcrum.datasets.api.model.RefsReadBatchRes;

/**
 * Weave's object API: {@code /obj/create}, {@code /obj/read}, {@code /objs/query}, {@code /obj/delete} and
 * {@code /refs/read_batch}.
 */
public class ObjectsResource implements ObjectsApi {

    @Inject
    WeaveObjects objects;

    @Inject
    WeaveRefs refs;

    @Inject
    ObjectMapper json;

    @Override
    public Response objCreate(ObjCreateReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getObj().getProjectId(), "body", "obj",
                "project_id");
        DatasetService.Created created = objects.createObject(name, req.getObj().getObjectId(), req.getObj().getVal());
        return Response.ok(new ObjCreateRes().digest(created.digest()).objectId(created.objectId())
                .versionIndex(created.versionIndex())).build();
    }

    @Override
    public Response objRead(ObjReadReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        return Response.ok(new ObjReadRes().obj(schema(objects.read(name, req.getObjectId(), req.getDigest()))))
                .build();
    }

    @Override
    public Response objsQuery(ObjQueryReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        ObjectVersionFilter filter = req.getFilter() == null ? new ObjectVersionFilter() : req.getFilter();
        List<WeaveObjects.Found> found = objects.query(name, filter.getObjectIds(), filter.getBaseObjectClasses(),
                filter.getLatestOnly(), filter.getIsOp(), req.getLimit(), req.getOffset());
        return Response.ok(new ObjQueryRes().objs(found.stream().map(this::schema).toList())).build();
    }

    @Override
    public Response objDelete(ObjDeleteReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        return Response.ok(new ObjDeleteRes().numDeleted(objects.delete(name, req.getObjectId(), req.getDigests())))
                .build();
    }

    @Override
    public Response refsReadBatch(RefsReadBatchReq req) {
        return Response.ok(new RefsReadBatchRes().vals(refs.read(req.getRefs()))).build();
    }

    private ObjSchema schema(WeaveObjects.Found found) {
        DatasetVersion v = found.version();
        return new ObjSchema().projectId(found.project().id()).objectId(v.objectId).createdAt(v.createdAt)
                .deletedAt(v.deletedAt).digest(v.digest).versionIndex(v.versionIndex).isLatest(found.latest() ? 1 : 0)
                .kind(ObjSchema.KindEnum.fromValue(v.kind)).baseObjectClass(v.baseObjectClass)
                .val(WeaveObjects.val(v, found.project().entity(), found.project().project(), json));
    }
}
