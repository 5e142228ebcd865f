/**
 * Model families' chat formats, apart from the engines that run them (as llama.cpp keeps its chat formats apart from
 * the server's slot loop): {@link dev.fulcrum.inference.engine.format.ChatFormats} detects a template's family,
 * {@link dev.fulcrum.inference.engine.format.ChatFormat} renders a request for it, gives the grammar of its calls and
 * reads its answers, {@link dev.fulcrum.inference.engine.format.ReplyStream} streams an answer as OpenAI's deltas.
 */
package dev.fulcrum.inference.engine.format;
