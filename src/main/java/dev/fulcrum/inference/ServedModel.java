package dev.fulcrum.inference;

/** A model chat completions can use: its id, its {@code root} in the model list and the backend answering for it. */
public record ServedModel(String id, String root, Backend backend) {
}
