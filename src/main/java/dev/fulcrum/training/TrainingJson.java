package dev.fulcrum.training;

import java.util.List;

import jakarta.inject.Singleton;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.jackson.ObjectMapperCustomizer;

import dev.fulcrum.platform.json.StorableText;
import dev.fulcrum.training.api.model.TrainingJobCreate;
import dev.fulcrum.training.api.model.TrainingLogRequest;

/**
 * Trajectory groups are kept as JSON text (a job's input, a log's groups), so they may hold the NUL character that
 * other request strings may not: a model may well have generated one.
 */
@Singleton
public class TrainingJson implements ObjectMapperCustomizer {

    private abstract static class GroupsAreJsonText {
        @JsonDeserialize(contentUsing = StorableText.JsonText.class)
        List<ObjectNode> trajectoryGroups;
    }

    @Override
    public void customize(ObjectMapper mapper) {
        mapper.addMixIn(TrainingJobCreate.class, GroupsAreJsonText.class);
        mapper.addMixIn(TrainingLogRequest.class, GroupsAreJsonText.class);
    }
}
