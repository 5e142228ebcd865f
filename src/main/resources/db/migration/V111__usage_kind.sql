-- Usage of Tinker work (issue 59) in the completions' log: what a row counts. `completion` (every request of the
-- gateway, as before), `tinker_sample` (a sample of a Tinker sampling client) or `tinker_train` (the tokens of a Tinker
-- forward or forward_backward). A constant default adds the column without rewriting the table.
alter table inference_usage add column kind varchar(16) not null default 'completion';
