/**
 * Where models run, and what local engines share: {@link dev.fulcrum.inference.engine.LocalChatCompletion} answers a
 * chat completion in OpenAI's shapes over any {@link dev.fulcrum.inference.engine.LocalChatModel} (an engine that
 * renders, tokenizes and generates), {@link dev.fulcrum.inference.engine.LocalTextCompletion} a text completion, one
 * choice per turn of the engine's fair executor ({@link dev.fulcrum.inference.engine.LocalChoices}).
 */
package dev.fulcrum.inference.engine;
