package dev.fulcrum.datasets;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;

import dev.fulcrum.datasets.api.TablesApi;
import dev.fulcrum.datasets.api.model.SortBy;
import dev.fulcrum.datasets.api.model.TableCreateFromDigestsReq;
import dev.fulcrum.datasets.api.model.TableCreateFromDigestsRes;
import dev.fulcrum.datasets.api.model.TableCreateReq;
import dev.fulcrum.datasets.api.model.TableCreateRes;
import dev.fulcrum.datasets.api.model.TableQueryReq;
import dev.fulcrum.datasets.api.model.TableQueryStatsBatchReq;
import dev.fulcrum.datasets.api.model.TableQueryStatsBatchRes;
import dev.fulcrum.datasets.api.model.TableQueryStatsReq;
import dev.fulcrum.datasets.api.model.TableQueryStatsRes;
import dev.fulcrum.datasets.api.model.TableStats;
import dev.fulcrum.datasets.api.model.TableUpdateReq;
import dev.fulcrum.datasets.api.model.TableUpdateRes;
import dev.fulcrum.datasets.api.model.TableUpdateSpec;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.http.QueryParams;

public class TablesResource implements TablesApi {

    @Inject
    DatasetService datasets;

    @Inject
    WeaveObjects objects;

    @Inject
    WeaveRefs refs;

    @Override
    public Response tableRows(String entity, String project, String tableDigest, Integer limit, Integer offset) {
        int skip = QueryParams.offset(offset);
        Integer max = limit == null ? null : QueryParams.limit(limit, 0, 0, Integer.MAX_VALUE);
        datasets.requireTable(entity, project, tableDigest, "path", "table_digest");
        StreamingOutput body = output -> {
            OutputStream out = new BufferedOutputStream(output, 65536);
            datasets.forEachRow(tableDigest, skip, max, row -> {
                try {
                    DatasetMapper.writeRow(row, out);
                    out.write('\n');
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            out.flush();
        };
        return Response.ok(body, DatasetsResource.JSONL).build();
    }

    @Override
    public Response tableCreate(TableCreateReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getTable().getProjectId(), "body", "table",
                "project_id");
        WeaveObjects.TableCreated created = objects.createTable(name, req.getTable().getRows());
        return Response.ok(new TableCreateRes().digest(created.digest()).rowDigests(created.rowDigests())).build();
    }

    @Override
    public Response tableUpdate(TableUpdateReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        List<WeaveObjects.TableChange> changes = new ArrayList<>();
        for (int i = 0; i < req.getUpdates().size(); i++) {
            TableUpdateSpec u = req.getUpdates().get(i);
            int given = (u.getAppend() != null ? 1 : 0) + (u.getInsert() != null ? 1 : 0)
                    + (u.getPop() != null ? 1 : 0);
            if (given != 1) {
                throw ApiException.invalid(
                        Violation.of("Exactly one of append, insert, pop", "value_error", "body", "updates", i));
            }
            changes.add(u.getAppend() != null ? new WeaveObjects.TableChange("append", null, u.getAppend().getRow())
                    : u.getInsert() != null
                            ? new WeaveObjects.TableChange("insert", u.getInsert().getIndex(), u.getInsert().getRow())
                            : new WeaveObjects.TableChange("pop", u.getPop().getIndex(), null));
        }
        WeaveObjects.TableUpdated updated = objects.updateTable(name, req.getBaseDigest(), changes);
        return Response.ok(new TableUpdateRes().digest(updated.digest()).updatedRowDigests(updated.addedRowDigests()))
                .build();
    }

    @Override
    public Response tableQuery(TableQueryReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        int skip = req.getOffset() == null ? 0 : offsetOf(req.getOffset());
        Integer max = req.getLimit() == null ? null : limitOf(req.getLimit());
        List<String> rowDigests = req.getFilter() == null ? null : req.getFilter().getRowDigests();
        List<DatasetService.RowOrder> orders = ordersOf(req.getSortBy());
        datasets.requireTable(name.entity(), name.project(), req.getDigest(), "body", "digest");
        StreamingOutput body = output -> {
            OutputStream out = new BufferedOutputStream(output, 65536);
            out.write("{\"rows\":[".getBytes(StandardCharsets.US_ASCII));
            boolean[] first = { true };
            datasets.forEachRow(req.getDigest(), rowDigests, orders, skip, max, row -> {
                try {
                    if (!first[0]) {
                        out.write(',');
                    }
                    first[0] = false;
                    DatasetMapper.writeRow(row, out);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            out.write("]}".getBytes(StandardCharsets.US_ASCII));
            out.flush();
        };
        return Response.ok(body, MediaType.APPLICATION_JSON_TYPE).build();
    }

    @Override
    public Response tableQueryStats(TableQueryStatsReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        int count = datasets.rowCount(name.entity(), name.project(), req.getDigest(), "body", "digest");
        return Response.ok(new TableQueryStatsRes().count(count)).build();
    }

    @Override
    public Response tableCreateFromDigests(TableCreateFromDigestsReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        String digest = objects.createTableFromDigests(name, req.getRowDigests(), req.getExpectedDigest());
        return Response.ok(new TableCreateFromDigestsRes().digest(digest)).build();
    }

    @Override
    public Response tableQueryStatsBatch(TableQueryStatsBatchReq req) {
        WeaveObjects.ProjectName name = WeaveObjects.projectName(req.getProjectId(), "body", "project_id");
        boolean storage = Boolean.TRUE.equals(req.getIncludeStorageSize());
        List<TableStats> tables = refs.tableStats(name, req.getDigests(), storage).stream()
                .map(t -> new TableStats().digest(t.digest()).count(t.count()).storageSizeBytes(t.storageBytes()))
                .toList();
        return Response.ok(new TableQueryStatsBatchRes().tables(tables)).build();
    }

    /** A sort_by's key paths: {@code nested.name} is the path [nested, name]; an empty segment is a 422. */
    private static List<DatasetService.RowOrder> ordersOf(List<SortBy> sortBy) {
        List<DatasetService.RowOrder> orders = new ArrayList<>();
        if (sortBy == null) {
            return orders;
        }
        for (int i = 0; i < sortBy.size(); i++) {
            String field = sortBy.get(i).getField();
            String[] path = field.split("\\.", -1);
            if (field.isEmpty() || Arrays.stream(path).anyMatch(String::isEmpty)) {
                throw ApiException.invalid(Violation.of("Must be a dot-separated key path such as 'a' or 'a.b'",
                        "value_error", "body", "sort_by", i, "field"));
            }
            orders.add(new DatasetService.RowOrder(path, sortBy.get(i).getDirection() == SortBy.DirectionEnum.DESC));
        }
        return orders;
    }

    private static int offsetOf(Integer offset) {
        if (offset < 0) {
            throw ApiException.invalid(Violation.of("Must be 0 or more", "greater_than_equal", "body", "offset"));
        }
        return offset;
    }

    private static int limitOf(Integer limit) {
        if (limit < 0) {
            throw ApiException.invalid(Violation.of("Must be 0 or more", "greater_than_equal", "body", "limit"));
        }
        return limit;
    }
}
