// Command rollout runs and reads experiments on rollout strategies for RL fine-tuning of
// language models: it trains a tiny Llama-style policy, samples rollouts flat or as trees
// under an exactly counted token budget, scores them with verifiers, updates the policy, and
// records every run in an embedded bbolt store that its reading commands, reports, plots and
// dashboard read.
//
// Usage:
//
//	rollout COMMAND [ARGUMENTS] [FLAGS]
//
// The commands:
//
//	run           run a config's variants × seeds into the store (resumes; --shard for clusters)
//	suite         run the rollout-economics suite and write its reports into results/
//	ls            list experiments and runs with status and progress
//	show          a run's record and last metrics
//	report        compare variants at one point (tokens:T, step:N, final, ...) with t-tests
//	plot          a metric per variant against steps, tokens or time, with 95% bands
//	trees         the rollout trees of a run's step
//	export        a run's or experiment's metrics, trajectories or groups as JSON lines or CSV
//	ui            the web dashboard over the store
//	merge         fold stores (shards) into one
//	compact       rewrite a store without free pages
//	check         check a store for damage
//	config show   a config's variants, fully resolved
//	pretrain      train (or find in the cache) a config's base policy
//	reward-model  train (or find in the cache) a config's learned reward model
//	sample        one rollout group on one prompt, exactly as a run makes it
//	passrate      PassRate against generated tokens: i.i.d. sampling against trees
//	ttc           test-time compute: best-of-N, majority vote and trees at answer time
//	rm-quality    best-of-N over reward-model quality: a ranking reward model's checkpoints
//	cost          a cost model of the RL step: per-phase FLOPs, bytes, fitted time; where generation dominates
//	serve         an OpenAI-compatible completions server over a checkpoint
//	task          the bundled tasks: their prompts, demonstrations and verifiers
//	model         create and inspect policy checkpoints
//
// "rollout COMMAND --help" gives a command's flags; "rollout help reference" prints this
// reference, as "go doc ./cmd/rollout" does. The configs are described in
// experiments/config/README.md, the measured performance in results/performance.md.
//
// # One grammar for every command
//
// The flags mean the same wherever they appear:
//
//	| flag | means | in |
//	| --- | --- | --- |
//	| --set dotted.key=value | a config override (repeatable); the value in YAML syntax | run, pretrain, reward-model, config show, sample, passrate, cost, rm-quality |
//	| --checkpoint DIR | a policy checkpoint to read | model logits, model sample, model export, sample, ttc, serve |
//	| --policy URL, --model NAME | instead of --checkpoint: the policy behind an OpenAI-compatible server (--timeout, --concurrency, --retries, --max-answer-mib tune its client; --api-key-env names the key variable) | sample, ttc, passrate |
//	| --config FILE | take the task (and, for sample, everything) from an experiment config | sample, ttc, task show, task verify |
//	| --param key=value | a task parameter (the config's task.params) | task show, task verify, sample, ttc |
//	| --strategy-param key=value | a strategy parameter (the config's rollout.params) | sample |
//	| --prompt TEXT | prompt text | model logits, model sample, sample, task verify |
//	| --format F | the output, wherever there is a choice: table, markdown, csv, json, jsonl or text as the command lists (gguf for model export) | report, export, model export, sample, trees, ttc, passrate, passrate trend |
//	| --temperature, --top-k, --top-p | sampling | model sample, sample, ttc |
//	| --store PATH | the store (default $ROLLOUT_STORE, else rollout.db) | run, suite, plan, verdict and every reading command |
//	| --cache DIR | base policies and reward models (default $ROLLOUT_CACHE, else the user cache directory) | run, plan, suite, pretrain, reward-model, sample, passrate, rm-quality |
//
// Exit status: 0 on success, 2 for bad usage or input (a message names the flag, key, file,
// line or value), 1 for a failure while running, 130 when interrupted. A mistyped command, flag,
// task or experiment name is refused with the closest names offered
// (unknown flag: --metirc (did you mean "--metric"?)).
//
// # rollout model
//
//	rollout model init --size tiny --seed 1 --out ckpt/       # random weights ~ N(0, 0.02²); ckpt/ new or empty (--force overwrites)
//	rollout model logits --checkpoint ckpt/ --prompt "12+34"   # JSON: token ids, next-token logits per position
//	rollout model sample --checkpoint ckpt/ --prompt "12+34" -n 4 --temperature 1 --top-p 0.95 --seed 7
//	rollout model export --checkpoint ckpt/ --format gguf --type q8_0 --out policy.gguf   # GGUF for llama.cpp, ollama, LM Studio (--type f32 or q8_0)
//
// A checkpoint directory holds model.safetensors (Hugging Face Llama tensor names:
// model.embed_tokens.weight, model.layers.{i}.self_attn.{q,k,v,o}_proj.weight,
// model.layers.{i}.mlp.{gate,up,down}_proj.weight,
// model.layers.{i}.{input,post_attention}_layernorm.weight, model.norm.weight,
// lm_head.weight), an HF-style config.json and the tokenizer's vocab.json, so a PyTorch
// user can load the weights into transformers.LlamaForCausalLM.
//
// rollout model export --format gguf writes the same policy as one GGUF file (Llama
// architecture, the vocabulary embedded; f32 or q8_0) that llama.cpp, ollama and LM Studio
// load. Prompts are <bos>TEXT<sep> and generation ends at <eos>: for llama.cpp,
// llama-completion -m policy.gguf -p '<bos>12+34<sep>' -n 16 --temp 0; for ollama, a
// Modelfile with FROM ./policy.gguf and TEMPLATE "<bos>{{ .Prompt }}<sep>", then ollama create.
//
// The tokenizer is character level: ids 0–3 are PAD, BOS, EOS and SEP, then the 60 characters
// 0-9, a-z and  +-*/=()<>,.:;|?!#_[] newline %&. A prompt is BOS prompt SEP, a
// response ends at EOS.
//
// # rollout task
//
//	rollout task show add --n 5 --seed 1 --split eval    # prompts with their demonstrations
//	rollout task verify countdown --param numbers=4 --prompt "4 7 9 7:23" --response "9+7+7"
//	# {"reward":1,"reason":"correct","answer":"23"}   (exit 0 for any response; a malformed prompt exits 2)
//	rollout task show --config experiments/configs/quickstart.yaml --n 3    # the task of a config, with its parameters
//	rollout task show --config experiments/configs/econ/recipe.yaml --split eval --n 100 --seed 201
//	# the eval prompts of the config's runs at seed 201: those of eval.exclude_seeds held out
//
// --param key=value (repeatable) sets a task parameter by its config name (add: digits,
// scratchpad; countdown: numbers, min_number, max_number, min_target,
// max_target; path: nodes, route_len, extra_edges, allow_revisit,
// length_shaping; long_add: min_digits, max_digits, rewrite; chain: min_ops,
// max_ops); --config FILE takes the task and its parameters from an experiment
// config's first variant, and --param then overrides them. A prompt must fit the task's
// parameters: the default countdown gives 3 numbers, so the 4-number prompt above needs
// --param numbers=4.
//
// Tasks: add (n-digit addition with a carry scratchpad: 758+467 → 15 12 12=1225, with
// --param digits=3), countdown (reach the target with + − × ÷ over the given numbers, each at most once:
// 4 7 9 7:23 → 7+7+9=23), path (a route through a graph given in the prompt, where a
// wrong first move leads into a dead end: ab ac bd ce cf dg:a>g → abdg). Train and eval
// prompts are disjoint (a hash of the prompt text decides its split).
//
// Two long-reasoning tasks give tree search room: long responses of mostly predictable
// characters with a few decisive ones in the middle, where forks are allowed (before the
// answer start), and flawed demonstrations whose mistakes sit there too.
//
//   - long_add (min_digits 4, max_digits 6, rewrite true): addition of two d-digit
//     numbers worked column by column from the lowest, each entry first rewriting the numbers
//     still to add (the column's digits are their last ones), then the column's digits,
//     carry-in and sum; then the answer: 758+467 →
//     758+467:8+7+0>15 75+46:5+6+1>12 7+4:7+4+1>12=1225 (d²+13·d or one more characters:
//     68–115 with the defaults). With rewrite: false the entries are the columns alone,
//     8+7+0>15 5+6+1>12 7+4+1>12=1225 (10·d or 10·d+1 characters, up to 301 with
//     max_digits: 30), but then the policy must find each column's digits in the prompt,
//     which the tiny model did not learn in 600 steps at 6–8 digits (0% greedy). The answer
//     after = is graded; the scratchpad must have one well-formed entry per column, its
//     digits are not graded. Flawed demonstrations slip once in a column drawn uniformly — a
//     miscopied digit, a forgotten carry, a column sum off by one — and carry the slip through
//     to a consistent wrong answer (one in ten slips an answer digit instead).
//   - chain (min_ops 6, max_ops 8): a chain of additions and subtractions of one-digit
//     numbers to a two-digit start, the running value staying in 10–99, worked one operation at
//     a time, each step the chain so far rewritten with its first operation done (the value,
//     the operation, =, the new value, the operations still to do): 47+8-5+9 →
//     47+8=55-5+9 55-5=50+9 50+9=59 (n²+7n−1 characters for n operations: 77–119 with the
//     defaults). Each step's new value is a decisive choice computed from the four characters
//     before it; the copied values and operations are long predictable stretches, and nothing
//     needs looking up in the prompt but in the first step. The value after the last step's =
//     is graded; the steps must be one per operation, each v±d=w and one operation fewer than
//     the step before (values of 1–3 digits, not graded). Flawed demonstrations slip once at a
//     step drawn uniformly — the new value off by one or by ten (a slipped carry or borrow), or
//     an operation still to do miscopied — and carry the slip through to a consistent wrong
//     result.
//
// The two need a longer max_seq than tiny's 64 (see model: in experiments/config/README.md);
// experiments/configs/long_add.yaml compares flat sampling and entropy-guided tree search
// on long_add, experiments/configs/chain.yaml on chain.
//
// # Your own data: the jsonl task
//
//	task:
//	  name: jsonl
//	  params: {path: data.jsonl, verifier: numeric, tolerance: 1e-6, pattern: "#### (\\S+)", template: "{prompt}\n", max_response_len: 48}
//
// data.jsonl holds one {"prompt": "...", "answer": "..."} per line (the answer may be a
// JSON number; an optional "demo" is a full correct response, for pretraining; other keys are
// ignored). Verifiers: exact (the answer, spaces around it ignored), numeric (within
// tolerance · max(1, |answer|); 1,234 reads as 1234) and regex (exact, on what pattern
// extracts). pattern takes the last match's first group, or the whole match without a group,
// e.g. #### (\S+) or \\boxed\{([^}]*)\}; with exact or numeric it extracts before
// comparing. template makes the prompt text, replacing every {prompt}. max_response_len
// defaults to the longest demonstration (the answer itself when there is no pattern and no
// demo); set it when responses may be longer. A relative path in a config file (or in a --set
// of one) is relative to the config file's directory, as checkpoint is; given with --param
// it is relative to the working directory.
//
// Bad lines are an error naming the file and line of each (data.jsonl:7: answer "seven" is not
// a number (verifier numeric)); a prompt repeated with another answer is one. As for the
// bundled tasks, a hash of the prompt text puts one prompt in 8 into the eval split; prompt i
// of a split walks the split's prompts in a seeded order, each once per pass. Any text may be
// graded, but a local policy reads only the 60 characters of its alphabet: runs and pretraining
// refuse a file with other characters, naming the line, and such data is for a model behind an
// OpenAI-compatible server.
//
// # rollout sample
//
//	rollout sample --checkpoint ckpt/ --task add --param digits=3 --strategy entropy_tree --strategy-param m=2 --strategy-param t=2 --seed 3
//	rollout sample --checkpoint ckpt/ --task add --strategy flat --strategy-param n=8 --budget 200 --format json
//	rollout sample --config experiments/configs/quickstart.yaml --variant entropy_tree --split train --index 0 --seed 1
//
// Makes one rollout group on one prompt exactly as a run of the config does — the same
// sampling request, random streams, rewards, advantages and filtering rule — and prints the
// tree (indentation per fork, the fork score at each fork, each node's finish reason, leaf
// text, reward, reward terms and reason) or, with --format json, the group's record: the
// prompt (text and tokens), the budget (limit, generated_tokens, prefill_tokens,
// decode_tokens, flops, skipped_branches, unheld_tokens when not 0, unspent),
// missing_forks, filtered, every
// node (parent, fork_at, iteration, fork_score, finish, tokens, log-probs,
// entropies) and every leaf (text, reward, terms, reason, advantage per token). The config is
// --config's variant, or the defaults for --task; --param k=v sets a task parameter as in
// rollout task (task.params.k), and --strategy, --strategy-param k=v, --temperature,
// --top-k, --top-p, --budget and --advantage are shorthands for the config keys they
// name (rollout.params.k for a strategy parameter; --set sets any). The policy is --checkpoint, or the config's base
// policy. With a run's seed, --split train --step 0 and its base policy, group I is group I
// of the run's step 1: rollout trees RUN --step 1 --group I prints the same text (and with
// --format json the same JSON) — one record, one JSON encoding and one renderer serve
// sample, trees, export --what groups and the store.
//
// # rollout serve: an OpenAI-compatible server
//
//	rollout serve --checkpoint ckpt/ [--addr 127.0.0.1:8000] [--model-name NAME] [--max-batch 64] [--queue 64] [--int8]
//	curl -s localhost:8000/v1/completions -H 'Content-Type: application/json' -d '{"prompt": "12+34", "n": 4, "max_tokens": 16, "seed": 1, "logprobs": 2}'
//
// Serves the checkpoint of --checkpoint (or given as the argument, rollout serve ckpt/) under GET /v1/models and POST /v1/completions with OpenAI's shapes, as
// the model --model-name (default: the checkpoint directory's name, ckpt here):
// prompt (a string, a list of strings, a list of token ids or a list of such lists), n,
// max_tokens (when not given, 16 or what the context leaves if less; given, it must fit), temperature, top_p, seed,
// stop (up to 4 strings), logprobs (0–20 alternatives: tokens, token_logprobs,
// top_logprobs, text_offset), echo, and vLLM's return_tokens_as_token_ids and
// prompt_logprobs; usage counts prompt and completion tokens (EOS included). A text prompt
// is encoded as the policy reads it, BOS prompt SEP; a token-id prompt is used as given. A
// completion ends at EOS (finish_reason stop), at a stop string (stop) or at max_tokens
// (length). Special tokens carry no text and appear in logprobs as <bos>, <sep>, <eos>;
// logprobs are those of the model's own distribution (temperature 1, no top-p), as vLLM reports
// them. The same seed gives the same completions whatever else the server is doing:
// completion c of a prompt samples from the counter-based stream (seed, c).
//
// Concurrent requests are decoded together: one scheduler goroutine advances the live
// sequences of all requests in one engine batch per step (one batch per distinct
// temperature/top-p). Requests wait in a bounded queue (--queue; a full queue answers 429).
// Bad requests get a 400 in OpenAI's error shape naming the param (wrong types, values out of
// range, characters outside the alphabet, prompt + max_tokens beyond the context); unknown
// fields are ignored; parameters that would change the result but are not implemented
// (stream, best_of ≠ n, penalties, logit_bias, suffix) are refused. The server
// listens on loopback unless --addr says otherwise (then it warns; see Security below for
// keys and what is bounded), and an interrupt stops it after the requests in flight.
//
// # Security
//
// Two commands open a network port. rollout serve exposes the model: anyone who reaches it
// can sample completions and log-probabilities, which costs CPU time; it reads nothing but
// the checkpoint. rollout ui exposes the store, read-only: every experiment's configs,
// metrics and rollout groups (prompts and responses); it never writes.
//
// Both listen on loopback (127.0.0.1) by default. There they answer only requests whose Host
// header names localhost or a loopback address (403 otherwise), so a web page cannot reach
// them by DNS rebinding; serve reads only Content-Type: application/json bodies (415
// otherwise), so a page cannot send it a form.
//
// To require a key, set ROLLOUT_API_KEY or pass --api-key-file FILE (no flag takes the key
// itself: other users could read it in the process list). Every request must then carry
// Authorization: Bearer KEY (otherwise 401, in OpenAI's error shape); the dashboard also
// accepts the key as the password a browser asks for. Started with any other --addr (e.g.
// 0.0.0.0:8000), a server warns what it exposes; the key then crosses the network over plain
// HTTP, so put a TLS proxy in front of it or reach it through an SSH tunnel.
//
// Each serve request is bounded: prompts × n within --max-batch, prompt plus max_tokens
// within the model's context; at most --queue + --max-batch requests are held (429 beyond)
// and at most 4 × that many connections; logprobs are scored between other requests' decode
// steps; a request is dropped when its client disconnects or after --request-timeout (5
// min); a body must arrive within 30 s, and idle connections close after 60 s.
//
// As a client (--policy URL), rollout sends $OPENAI_API_KEY (or the variable --api-key-env
// names) as a bearer key, and warns before sending it over plain HTTP beyond loopback. It
// reads at most --max-answer-mib (64) MiB of an answer after decompression, and retries only
// 429, 500, 502, 503, 504 and lost connections (at most a quarter of --concurrency retries at
// once). Text from a server that it prints has its terminal control characters escaped.
//
// # Remote policies
//
//	rollout sample --policy http://127.0.0.1:8000 --model ckpt --task add --strategy entropy_tree --strategy-param m=2 --strategy-param t=2 --budget 400
//	rollout ttc --policy http://gpu-box:8000 --model Qwen/Qwen2.5-0.5B --config my_jsonl.yaml --n 1,3,6 --prompts 100
//
// --policy URL (with --model NAME, default the server's only model) samples from any
// OpenAI-compatible completions server instead of a checkpoint: rollout serve, vLLM, SGLang,
// llama.cpp. sample makes the config's group through it — flat as one request with n = N,
// entropy_tree and random_tree as M roots in one request, then L fork iterations, each
// forking the N best positions of every tree (before the answer start, never a node's first or
// last token, as local trees) by sending the prompt plus the response's first t tokens as a new
// prompt with n = T and max_tokens = max − t — then scores, sets advantages and prints it
// as a local group (the same record, JSON and text). segment_tree, --top-k and a config's
// learned reward term (reward.model) need a local policy and are refused (exit 2, before any completion
// request), as is a --model the server does not serve (the error lists the ones it does). ttc measures
// best-of-N, majority vote and trees over the served policy (--reward-model selects among
// its responses as among a local policy's; one with characters outside the reward model's
// alphabet is never selected).
//
// GET /v1/models tells the servers apart: against rollout serve (owned_by: rollout)
// prompts and forks are sent as the character tokenizer's ids (BOS prompt SEP, then the
// response's ids); against vLLM tokens come back as ids (return_tokens_as_token_ids) and
// prompts and forks go as ids too, the prompt's from vLLM's POST /tokenize (as text if the
// server has no such endpoint); elsewhere everything is text, and a token's id is the index of
// its string among those seen. A text fork is the prompt text and the text of the first t
// tokens (cut from the completion at its text_offsets), which the server tokenizes anew, so
// its boundary may differ from the sampled tokens'. The
// task supplies prompts and verifies the returned text. Log-probabilities, and so surprisal
// and entropy, are the server's: for rollout serve and vLLM those of the model's own
// distribution (temperature 1). rollout serve counts EOS in usage but lists no EOS token,
// so a node's tokens end before it, and the budget's unheld_tokens counts those EOS (with
// stop strings, the tokens cut with them): generated_tokens is always the nodes' tokens
// plus unheld_tokens, as for a local group, whose nodes hold their EOS. A remote group
// of rollout serve is a sample of the local group's distribution, not the same sample:
// serve draws completion c of a request from stream (request seed, c), a local node
// from a stream of (seed, step, prompt, node) that no request can name, and remote forks
// rank positions by the top-k entropy estimate.
//
// Entropy from top-k log-probabilities (openai.TopKEntropy; requests ask for k = 20): with
// p₁ ≥ … ≥ p_k the returned probabilities, H_k = −Σ pᵢ log pᵢ and the tail mass
// r = 1 − Σ pᵢ, every other token has probability at most c = min(p_k, r), so
//
//	Ĥ = H_k + r·log(1/c)  ≤  H  ≤  H_k + r·log((V − k)/r)
//
// with V the vocabulary size (the upper bound is the tail spread evenly). The estimate Ĥ is the
// lower bound, exact when the tail is as concentrated as the top-k allow, and at most
// r·log((V − k)·c/r) ≤ r·log V below H; a sampled token returned beside the top k adds its own
// term without moving c. Entropy forks rank positions by Ĥ; surprisal needs only the sampled
// token's log-probability.
//
// Budget: a group's generated tokens are the servers' usage.completion_tokens summed over
// its requests; prefill tokens are their usage.prompt_tokens (forks re-send the shared
// prefix), and FLOPs are not known (0). A request is sent only when the budget left covers
// n × max_tokens, so the budget is never exceeded; a request it covers in part asks for as
// many completions as it covers, and the rest count as skipped branches.
//
// Faults: at most --concurrency requests are in flight (default 8); each attempt has
// --timeout (default 2 min) to return its whole answer; 429, 5xx, connection errors,
// timeouts and answers cut short are retried --retries times (default 4) after 0.5 s, 1 s,
// 2 s, … (at most 10 s). Anything else — a 4xx, malformed JSON, a wrong number of choices,
// logprobs missing or of inconsistent lengths, usage beyond n × max_tokens — fails at once,
// as does the last retry, with an error naming the URL, the status and the server's message:
// http://gpu-box:8000/v1/completions: 500 Internal Server Error: CUDA out of memory (after 5 attempts).
// The command then exits 1 (2 for bad flags).
//
// For studies over many prompts (pass rates, test-time compute) without the command line:
// remote.Dial(ctx, openai.Options{BaseURL: url}, model) returns a *remote.Sampler; set its
// Temperature, TopP, MaxTokens, Budget, Seed and Step, and
// Sampler.Generate(ctx, strategy, prompts) returns one search.Group per prompt, whose
// leaves' text is Sampler.Text(leaf.Response()); rl.RemotePrompts makes the prompts of a
// task's prompts, rl.ScoreText scores a group, rl.MeasureRemoteTTC runs ttc's sweep.
//
// # Pretraining: the base policies
//
// Supervised pretraining on the task's demonstrations, 30% of them flawed, leaves an imperfect
// base policy with room for RL (defaults: tiny model, batch 32, Adam 1e-3). The greedy
// accuracies and wall times measured for each task, and the commands that reproduce them, are in
// results/performance.md; experiments/configs/long_add.yaml
// pretrains 1000 steps, a base policy inside the 20–60% band.
// go test ./experiments/pretrain -run TestPretrainSmokeLandsInBand checks that a smoke
// setting (two-digit operands, a one-block model of dim 64, 350 steps) lands in the band.
//
// # rollout pretrain and rollout config show
//
//	rollout config show experiments/configs/quickstart.yaml --set train.lr=3e-4
//	rollout pretrain experiments/configs/quickstart.yaml
//
// config show prints every variant fully resolved (defaults filled in). pretrain trains the
// base policy of a config (supervised, on the task's demonstrations with a share of flawed
// ones) with a progress bar, reports its loss and held-out greedy accuracy, and caches the
// checkpoint under the hash of its settings (--cache, $ROLLOUT_CACHE, or the user cache
// directory), so runs that share a base policy train it once.
//
// # rollout reward-model
//
//	rollout reward-model CONFIG [--set reward_model.prompts=2048]
//
// Builds the learned reward model a config's reward: {model: w} term uses: responses sampled
// from the base policy on train prompts, labelled by the verifier, a classifier (the policy's
// architecture with a scalar head on the last position) trained with binary cross-entropy,
// its AUC reported on held-out prompts; cached per base policy. Rewards mix verifier,
// model (sigmoid of the score), format (1 unless the response is malformed) and length
// (−len/max) terms with the config's weights.
//
// # rollout ttc
//
//	rollout ttc --checkpoint ckpt/ --task add --n 1,3,6,12 --prompts 100
//
// Test-time compute: accuracy against mean generated tokens (and candidates) per prompt for
// best-of-N (by a reward model with --reward-model DIR, with the verifier's choice among the
// same candidates beside it as oracle; else by the verifier: an oracle bound), majority
// vote, and an entropy tree at answer time (N a multiple of 3: two fork points a root; of 4:
// three). The reward model scores all candidates of all prompts
// of a sweep point at once, in batched forwards of similar lengths (a response it cannot read
// is never selected). --task NAME uses the task's default parameters; --config FILE takes the task and its parameters from an experiment config (as does rollout sample).
// --param key=value sets a task parameter, as in rollout task.
// --tree NAME:key=value,... makes the tree methods of any registered strategy instead, its
// --tree-roots key (default m) set so that it has N leaves a prompt (N not a multiple of its
// leaves at one root is skipped), e.g. --tree random_tree:n=2,l=1,t=1; --no-tree skips them.
// --policy URL --model NAME measures a policy behind an OpenAI-compatible server instead (see
// Remote policies).
//
// # rollout rm-quality: best-of-N over reward-model quality
//
//	rollout rm-quality experiments/configs/econ/ttc.yaml --checkpoints DIR --out results/rm_quality.md
//	results/rm_quality.sh [CHECKPOINTS] [CACHE]    # the committed report: two reward models, fixed marks
//
// Trains a reward model to order one prompt's candidates: the config's base policy samples
// --samples candidates for each of --train-prompts train prompts, the verifier labels them,
// and a copy of the policy with a scalar head is trained with a pairwise (Bradley–Terry) loss,
// −log σ(z_right − z_wrong) over every (right, wrong) pair of one prompt (--prompts-per-step
// prompts a step, up to --per-label right and wrong candidates each; --bce adds a weighted
// pointwise term; --near-misses K adds up to K near misses a right candidate as hard negatives:
// the candidate with one digit or letter changed, kept when the verifier grades it wrong and
// the prompt does not have it yet). --scoring likelihood scores a response by the copy's
// log-likelihood of it instead of a head (needs --bce 0). A checkpoint every --every steps,
// or at the steps --marks lists, and at step 0 (the untrained model) goes to
// --checkpoints DIR/step-NNNNN/ with its within-prompt AUC on --held-out-prompts eval
// prompts; then each checkpoint selects best-of-N (--n) among the base policy's candidates at
// answer time for every --seeds seed, as rollout ttc does, beside the verifier's choice and
// majority vote (--measure-steps: only those checkpoints). The markdown report (--out, else
// standard output) is the test-time compute result as a curve over reward-model quality,
// with the paired change of the largest N's best-of-N from one measured checkpoint to the next;
// results/ttc.md is not touched. --evaluate measures the checkpoints already in DIR again
// without training (give the flags the training had: the report describes them).
// --validation --held-out-first I takes the held-out prompts from the train split from prompt
// I on (past those trained on) instead of the eval split: a pilot chooses its settings there
// and leaves the eval split to the reported measurement.
//
// # rollout cost: a cost model of the RL step
//
//	rollout cost --measure results/cost_model.json --points fit       # the fitted points (minutes, one core, normal priority)
//	rollout cost --measure results/cost_model.json --points held-out  # then the held-out points, into the same file
//	rollout cost --validate                            # markdown (results/cost_model.md): fit, held-out validation, crossovers
//	rollout cost experiments/configs/quickstart.yaml   # one config's predicted phase shares
//
// Counts each phase of an RL step — prefill, decode, scoring (π_old's log-probs), the update's
// forward and backward passes — in FLOPs (policy.Config.ForwardFLOPs; rl.Config's passes)
// and bytes moved, and predicts its time as a sum of six terms, each a kind of work times a
// non-negative cost fitted per phase (the FLOPs of the products with the weights, the FLOPs of
// attention, the weights read once per pass, the activations per row, the optimizer's reads
// and writes, a cost per call), to the CPU time of the tiny, small and medium models at batch
// sizes 8–128 and response lengths 32–512 (--measurements, default results/cost_model.json; the
// held-out points validate the fit). For a config it prints, with its assumptions, each phase's
// predicted share of one step (every response at the cap), and generation's share over model
// sizes, response lengths and hardware balance (peak FLOP/s ÷ bytes/s on a roofline machine),
// with the balance above which generation is the larger share. --measure runs --repeats rounds
// over the points (one run of each a round; each phase's minimum kept), a point no more once
// its phases' minima add up to --budget CPU seconds; an existing file is resumed.
//
// # rollout passrate: what sampling alone buys (TreeRL Fig. 1, left)
//
//	nice -n 10 rollout passrate experiments/configs/long_add.yaml --prompts 1000 --out results/treerl
//	nice -n 10 rollout passrate experiments/configs/chain.yaml --prompts 1000 --out results/treerl_chain
//	rollout passrate CONFIG --k 32 --shape 2,2,1,1 --shape 6,2,1,2 --score entropy,surprisal,random --segment 16,2,8
//	rollout passrate CONFIG --policy http://gpu-box:8000 --model Qwen/Qwen2.5-0.5B --prompts 500 --k 32
//
// No training: on the config's base policy (pretrained and cached as rollout run does), its
// task and sampling settings, the first --prompts eval prompts get K i.i.d. samples each
// (flat) and each tree (an entropy tree per --shape M,N,L,T and --score, a segment tree per
// --segment S,B,W). The table's i.i.d. rows are --iid-n samples per prompt, each at most K;
// without --iid-n, the default points 1, 2, 4, 8, 16, 32 are clipped to K and end at K
// (--k 10: 1, 2, 4, 8, 10). Printed as markdown (or --format json): per method the mean generated
// tokens per prompt, PassRate (share of prompts with at least one correct leaf) and mean leaf
// accuracy with 95% bootstrap intervals over prompts; against i.i.d. sampling at the method's
// own tokens (pass@n over the K samples, interpolated in n: matched budgets) the paired
// bootstrap differences; and the i.i.d. tokens needed to reach the method's PassRate with
// their ratio (TreeRL reports about 0.5). Then, at each shape, the fork scores compared on
// the same prompts: every score against random forks and entropy against surprisal forks, the paired
// bootstrap difference of their PassRates, the difference of their tokens per prompt, the
// prompts only one of the two passes and the exact McNemar p-value (uncorrected). Then the i.i.d. responses' mean length, their mean
// entropy by preceding character, and the seconds each method took. --out PREFIX writes
// PREFIX_passrate.png, PREFIX_leafacc.png and PREFIX_entropy.png (mean entropy by
// response position, and the share of forks at each position that changed the outcome), and
// PREFIX_outcomes.csv, a row for each method and prompt: prompt (the eval prompt's index),
// prompt_text, method, family, shape (as the table names them), leaves and correct (the
// prompt's finished and correct responses; for an i.i.d. point, those of its K samples),
// tokens (generated for the prompt; for an i.i.d. point at n samples, n times the mean length
// of its K samples) and pass (1 when a leaf is correct, else 0; for an i.i.d. point, pass@n
// over the K samples). The mean of pass over the prompts is the table's PassRate, that of
// tokens its tokens/prompt.
//
//	rollout passrate trend tiny_outcomes.csv medium_outcomes.csv --a 'entropy(2,1,1,3)' --b 'random(2,1,1,3)' --seed 2
//
// compares the gap between two methods (--a's PassRate minus --b's) in measurements of the
// same prompts (other sizes or policies on the same eval prompts and seed): each file's two
// PassRates and gap, and each later file's change of the gap from the first file's, with 95%
// percentile bootstrap intervals over the prompts resampled together in every file (paired;
// --resamples, default 2,000, of the bootstrap --seed). With passrate's --seed and
// --resamples a file's gap is the interval passrate printed for the pair. Files of other
// prompts (another number, or another text at an index) or without both methods are refused
// (exit 2), naming the file, the prompt and the texts.
//
// With --policy URL (and --model NAME; --timeout, --concurrency, --retries as for
// sample, see Remote policies) the policy measured is the one behind that
// OpenAI-compatible server instead of the base policy; the config still gives the task, the
// sampling settings, rollout.budget and rollout.max_tokens. The i.i.d. samples and the
// entropy, surprisal and random trees go through its completions API, tokens per prompt count
// as the server's usage reports them, and entropies (the profile, the entropy score) are
// the top-k estimates described there (a lower bound on the true entropy). The segment tree has
// no remote form: with --policy none is measured and --segment is refused (exit 2), as are
// --cache and a config's rollout.top_k. The table has the same columns and rows otherwise.
//
// # rollout run and the store
//
//	rollout run CONFIG [--set key=value]... [--store PATH] [--workers N] [--shard i/n|auto [--shards N]] [--cache DIR]
//
// Runs every variant × seed of a config, N at a time (default: GOMAXPROCS, the threads Go
// runs on, by default the CPUs available; the runs split those threads between them), each step
// committed to the store in one transaction (metrics, every rollout group including filtered
// ones, and a checkpoint of the run's state). Results are bit-identical whatever N is.
// Running the same command again resumes: finished runs are skipped, unfinished ones continue
// from their last committed step (a killed run loses at most the step in flight).
// --shard i/n runs the runs i, i+n, i+2n, … of the grid (in the config's variant × seed
// order) into its own store, --shard auto takes i/n from a cluster's scheduler (see
// Across a cluster below); rollout merge folds shards together. The store is --store, $ROLLOUT_STORE, or
// rollout.db; a store held by another writer is reported within 2 s, naming the process;
// reading commands work during a run, on a snapshot the writing process copies for them of
// just what they read (ls the run records, report/plot/show one experiment's or run's
// metric records, trees/export their groups), in a read transaction that never holds its
// commits. A command that finds no store there says
// which path it tried and exits 2. A damaged store file (say, truncated by a full disk or a
// partial copy) is never read past its damage: every command either answers as from the intact
// store or fails, naming the file, saying that it is damaged and to restore it from a copy;
// rollout check lists what is damaged.
//
// Ctrl-C (SIGINT or SIGTERM) stops after the steps in flight commit: each run begun is
// recorded as stopped at its last committed step, rollout run prints what it did and the
// command line that resumes (run the same command again to resume: rollout run …), and
// exits 130. A second Ctrl-C
// stops at once: the steps in flight are lost, nothing is half-written (each step is one
// transaction). At the end rollout run prints one line per run, e.g.
// run 4de90402a32e strategy=flat seed 1: stopped at step 3, saying how it ended:
//
//	| line | the run |
//	|---|---|
//	| finished | ran to its last step |
//	| stopped at step k | interrupted; step k is its last committed step, where it resumes |
//	| failed at step k: error | failed with that error; rerunning retries it from step k |
//	| already done | was finished in the store before; skipped |
//	| not started | interrupted before it began |
//	| …, resumed from step k | continued after step k, committed by an earlier rollout run |
//
// A run's resume state (weights, optimizer, stale buffer, counters) is a file beside the store,
// STORE.ckpt/<run id>/<step>-<random>.bin, written and fsynced before the step's commit names
// it (with its size and SHA-256): one per unfinished run, deleted when the run finishes; files
// no commit names (a run killed mid-step) are deleted when the store is next opened for writing,
// rollout check reports a committed step whose file is missing or damaged, and rollout
// merge copies the state files of the unfinished runs it copies (stores of older builds, which
// kept states inside the store, still resume). With train.save_final: true its final
// policy is kept as a checkpoint directory beside the store, STORE.final/<run id>/
// (model.safetensors with Hugging Face Llama names, config.json, vocab.json), written,
// fsynced and renamed into place before the run is recorded as finished; rollout show RUN
// names it, and rollout model sample --checkpoint rollout.db.final/<run id> (or any
// --checkpoint) takes it. rollout merge copies the final policies of the runs it copies.
// The key is left out of the resolved config when false, so existing run ids are unchanged.
//
// rollout ls and rollout show give each run's status: running, finished, failed,
// stopped at step k, or interrupted at step k — a run recorded as running whose process is
// gone (killed, or stopped at once) while no process writes the store. Reading never writes:
// the next command that opens the store for writing records such runs as stopped. The steps
// column is the last committed step of the planned steps (step 0 is the base policy's
// evaluation). On a terminal the progress is bars (a stopped run's bar stays where it stopped,
// saying so); piped, plain lines, each printed once.
//
// Exit statuses, for every command: 0 success, 2 bad input (arguments, flags, configs, paths
// that name nothing), 1 any other failure (a damaged or locked store included), 130 stopped
// by an interrupt (rollout run after the steps in flight commit). rollout --version prints
// the module version and the commit the program was built from.
//
// An experiment name in a store stands for one set of resolved variant configs, recorded
// with the experiment. Running a config again with more seeds or new variants adds their runs;
// a config whose variants resolve differently (e.g. --set train.total_tokens=3000) is
// refused with exit status 2 before anything is written, naming each differing dotted key
// with both values: give it a new name: or another --store. A store written before
// configs were recorded takes each variant's config from its runs (and cannot be extended
// where a variant's runs already disagree); rollout merge applies the same rule.
//
// The metrics each run records are listed under Metrics below.
//
// # Across a cluster: --shard auto
//
// rollout run CONFIG --shard auto runs one shard of the grid as a task of a job array, taking
// i/n from the scheduler's variables:
//
//   - Slurm job arrays: the tasks SLURM_ARRAY_TASK_MIN, MIN + SLURM_ARRAY_TASK_STEP, …,
//     SLURM_ARRAY_TASK_MAX are the shards 0, 1, …, SLURM_ARRAY_TASK_COUNT − 1, whatever the
//     first index: --array=0-3, 1-4 and 0-6:2 all make 4 shards (a list such as 1,2,7
//     is refused). SLURM_ARRAY_TASK_ID says which task this is.
//   - Kubernetes Indexed Jobs: the shard is the pod's JOB_COMPLETION_INDEX, and since the
//     pod is not told the Job's completions, the number of shards is --shards N, else
//     $ROLLOUT_SHARDS (both, if given, must agree).
//
// Missing or inconsistent variables are an error (exit 2) naming each with its value, e.g.
// --shard auto: SLURM_ARRAY_TASK_ID=5 is not an index of the array of SLURM_ARRAY_TASK_MIN=1,
// SLURM_ARRAY_TASK_STEP=1, SLURM_ARRAY_TASK_COUNT=4, and a run under neither scheduler says so
// (give --shard i/n). The shard prints where it came from on stderr (shard 2/4
// (SLURM_ARRAY_TASK_ID=3 of …) into shards/shard-2-of-4.db).
//
// Each shard writes its own store. With --shard (auto or i/n), --store DIR/ (a directory,
// created if needed, or an existing one) holds shard i of n in DIR/shard-i-of-n.db, and
// {shard} and {shards} in --store are replaced by i and n (--store runs/{shard}.db).
// Another path (the default rollout.db too) is refused with --shard auto, whose shards,
// started alike, would all write that one file, and used as it is with --shard i/n. Once every shard
// has ended, rollout merge DIR/shard-*.db --into rollout.db folds them into one store, equal
// to a single process's run: the same runs, the same metrics bit for bit (wall times aside) and
// the same rollout groups. A shard that fails, or is preempted or requeued, resumes its store
// when it runs again with the same variables. Shards find base policies in the cache
// (--cache, $ROLLOUT_CACHE): on a cache that all of them share, rollout pretrain CONFIG
// run once before the array trains them once; otherwise each shard trains them itself, to
// the same weights, and the cache keeps one copy (concurrent builds are safe).
//
// experiments/cluster holds both: slurm.sh, a Slurm array of 4 shards,
// and the merge after it:
//
//	jid=$(sbatch --parsable experiments/cluster/slurm.sh experiments/configs/quickstart.yaml)
//	sbatch --dependency=afterok:$jid --wrap 'rollout merge shards/shard-*.db --into rollout.db'
//
// indexed-job.yaml, a Kubernetes Indexed Job of 4 pods, with the config in a ConfigMap and the stores on a shared
// volume (a ReadWriteMany claim when pods may land on different nodes); the image needs
// rollout on its PATH:
//
//	kubectl create configmap rollout-config --from-file=experiment.yaml=experiments/configs/quickstart.yaml
//	kubectl apply -f experiments/cluster/indexed-job.yaml
//	kubectl wait --for=condition=complete --timeout=24h job/rollout-shards
//	# then, where the volume is mounted:
//	rollout merge /shards/shard-*.db --into rollout.db
//
// go test ./cmd/rollout -run 'Cluster|Shards' checks both files against the command line
// (the flags they pass, --shard auto, ROLLOUT_SHARDS equal to completions, paths on the
// mounted volumes), then runs the Slurm script under bash with the variables Slurm sets for
// each array task, and the manifest's container command with its environment and each pod's
// JOB_COMPLETION_INDEX, all shards at once as separate processes sharing one cache, merges
// each set and compares it with a single-process run of the same config, bit for bit.
//
// # rollout suite: the rollout-economics suite
//
//	rollout suite results/ [--only NAME]... [--store PATH] [--workers N] [--cache DIR] [--no-run]
//
// Runs the experiments of the rollout-economics suite (experiments/configs/econ/NAME.yaml,
// from the repository's root) into the store, one report after another, and writes each
// report as results/NAME.md with its plots: the claim under test and its source, the design,
// checks (paired t-tests against the baseline over shared seeds, with the minimum detectable
// effect at 80% power) and a verdict computed from them — holds, does not hold, inconclusive
// or not testable here, naming the checks it rests on — then the tables (mean ± 95%
// t-interval over the config's seeds, read from the store at
// token marks or as per-run means over steps), the plots and how it was made (command, the
// runs' build and host, wall time, the writing commit and machine). Then it rewrites the
// suite's block of results/README.md (between its marker lines): each report's verdict,
// or the command and estimated time of those not written yet. Finished runs are skipped and
// unfinished ones resume, so an interrupted suite continues where it stopped; --only NAME
// (repeatable) makes those reports alone, --no-run writes them from the store as it is
// (skipping, with a note, the reports whose experiment the store has not run, and leaving their
// files as they are; exit 2 when --only names such a report or the store has none of them).
// Reports: compute, filtering, stale, temperature, max_length, quantized,
// per_prompt, advantage, ttc, recipe (see results/README.md).
// ttc also measures policies at answer time when it is written (--no-run too): each
// seed's base policy and the final policy its k1 run keeps (STORE.final/<run id>/), with
// best-of-N by the verifier and by the reward model in --cache (built there first when
// missing), majority vote and entropy trees; a deterministic computation, not stored.
//
// # Design as data: declared checks, planning, verdicts
//
// An experiment config declares under design: the checks its reports test. rollout run
// records the whole resolved design (every variant's settings, the seeds, the baseline, the
// checks) with its SHA-256 in the store before the first run, and refuses (exit 2, naming the
// key) another design of an experiment that declares checks. Reports compute declared checks
// as confirmatory and mark every other comparison exploratory; Holm's correction runs over
// each report's primary family; a check resting on a premise the test bed does not meet is
// not testable here, as is a wall-time check unless the variants ran side by side
// (rollout run --interleave) with the load recorded beside every run (always recorded).
//
//	design:
//	  alpha: 0.05              # two-sided level of every test (default)
//	  power: 0.8               # power rollout plan aims at (default)
//	  correction: holm         # over each report's primary family (default), or none
//	  premises:
//	    - name: accelerator_decoding
//	      text: a large model decoding token by token on an accelerator
//	      unmet: the test bed is a tiny model on 2 CPU cores    # → not testable here
//	  checks:
//	    - name: filter_keeps_accuracy
//	      claim: dynamic sampling does not hurt learning
//	      variant: filter
//	      baseline: no_filter      # default: the config's baseline
//	      metric: eval/acc
//	      at: tokens:20000         # final | step:N | tokens:T | train_flops:F | mean
//	      want: not worse          # higher | lower | not worse | not higher
//	      margin: 0.03
//	      family: primary          # or secondary
//	      effect: 0.03             # smallest effect of interest (default: the margin)
//	      pilot_sd: 0.041          # σ_d from rollout plan: reports quote the planned MDE
//
//	rollout config show CONFIG          # the resolved variants, the design and its hash
//	rollout plan CONFIG --pilot 3       # σ_d of every check from a 3-seed pilot (NAME_pilot) and its 80% upper limit, seeds for the design's power from each (recommended: from the limit), MDE of the configured seeds
//	rollout run CONFIG --interleave     # seed by seed: variants side by side, so wall times can decide
//	rollout verdict EXP [EXP...]        # markdown: design record, settings, checks and verdict; several experiments (base policies) pooled by DerSimonian–Laird, the Hartung–Knapp interval beside it
//
// # Reading the store
//
//	rollout ls [EXPERIMENT]
//	rollout show RUN
//	rollout report EXP [--metric M]... [--at final|best|step:N|tokens:T|flops:F|train_flops:F] [--baseline V] [--format table|markdown|csv|json]
//	rollout plot EXP --metric M [--x step|tokens|time] [--kind curve|diff [--baseline V]] [--variant V]... --out FILE.png|.svg [--width CM] [--height CM] [--dpi N]
//	rollout trees RUN [--step S] [--group G] [--format text|json]   # no --step: the last committed, named on stderr
//	rollout export RUN|EXP --what metrics|trajectories|groups --format jsonl|csv [--out FILE]   # groups: jsonl only
//	rollout merge A.db B.db... --into C.db
//	rollout compact [--store PATH]
//	rollout check [--store PATH]
//	rollout migrate [--store PATH]   # once, for a store of schema version 1
//	rollout note RUN [TEXT]          # add a note the dashboard shows; without TEXT, list them
//	rollout ui [--store PATH] [--addr 127.0.0.1:8080]
//
// Every stored record carries a CRC-32C checksum that every read verifies: a flipped bit is
// an error naming the run and step (exit 1), never data. A store written by an older
// rollout (schema version 1) is refused with the command that upgrades it: rollout migrate
// rewrites it once, in place.
//
// plot's x axis defaults to the experiment's budget axis (tokens when evaluations fall on
// token marks); --kind diff draws each variant minus the baseline, paired by seed, with its
// paired 95% interval. Notes under the figure (and on stderr) say what a curve leaves out.
// plot draws each variant's mean over seeds with a shaded 95% t-interval band (clipped to
// [0, 1] for accuracies, pass@k, maj@k and fractions), a marker at each evaluation mark on the
// tokens axis, a colour fixed per variant whatever --variant subset is drawn, whole-number
// ticks on the step axis (the steps every seed evaluated at), units on the axes, a caption with
// the number of seeds, and the legend below the data; 16 cm wide, PNG at 300 dpi, by default.
//
// report compares variants at one point of each run, and every output says which (a
// caption in table and markdown, axis in CSV and JSON): final (the end of each run),
// best, step:N (equal optimizer updates), tokens:T (the evaluation a run recorded at
// token mark T, eval/tokens_mark = T, reached with at most T sampled tokens; else a row at
// exactly T cumulative sampled tokens), flops:F (the evaluation at total-FLOPs mark F,
// eval/flops_mark = F; marks only) or train_flops:F (each run's last row with
// budget/train_flops_cum ≤ F). A point beyond a finished run's end, or a T at which some run
// has no row for a metric, is an error (exit 2) that lists the points every run has — the
// token marks common to all runs, the last step all reach — instead of a value taken
// elsewhere; a run still running that has not reached the point counts as missing. Runs of
// one variant with different resolved configs are never pooled: report and plot refuse
// them, naming the variant and a differing key. Plots against tokens draw a marker at each
// evaluation mark when a variant's runs share their marks (else they interpolate onto a grid).
//
// Which axis answers which question. Strategies that spend tokens differently (a tree shares
// its prefixes, so a step of 8 leaves costs fewer sampled tokens than 8 flat samples) reach a
// token budget after different numbers of optimizer updates, so the axes do not agree and each
// answers its own question:
//
//   - tokens:T, equal sampled tokens: *which strategy uses rollout compute best* — the
//     comparison a fixed sampling budget asks for, with whatever number of updates each strategy
//     affords in it (a mark at T is evaluated once the tokens left before T cover no further
//     group, so the run has sampled at most T tokens there);
//   - step:N, equal optimizer updates: *which strategy produces better samples per update*,
//     whatever they cost; exact only for metrics recorded at step N (per-step metrics such as
//     reward/mean, or evaluations when eval.every divides N): an evaluation metric takes the
//     last evaluation at or before N;
//   - train_flops:F, equal training FLOPs: *which strategy learns most per unit of update
//     compute* (trees train on every leaf's full sequence, so equal tokens is not equal update
//     cost); an evaluation metric takes the last evaluation at or below F;
//   - final: each run's true end (its last evaluation, at its budget) — equal to the last mark
//     when the budget is a multiple of eval.every_tokens.
//
// A claim that one strategy is "better" should name its axis; at equal tokens a tree's gain
// mixes better samples with more updates, and only the two views together separate them.
//
// merge and compact refuse a store that does not exist (--into is created if needed).
// check verifies a store: the file's size against bbolt's meta pages, bbolt's page structure,
// that every run's metric records and rollout groups decode and that each run's last step and
// token count agree with its last metric record. It exits 0 when the store is intact, 1 with a
// list of what is damaged. An intact store's check also says what its rollout groups take per
// sampled token (group chunks are stored DEFLATE-compressed). During a run check reads the
// records of a copy the writer makes; bbolt's page check of the file itself needs the writer
// gone.
//
// Reading during a run: the writing process copies, for each reading command, a snapshot of
// what that command reads into a temporary bbolt file — ls the experiment and run records,
// show/report/plot also the metric records of the named run or experiment, trees and
// export its groups (or metrics), ui metrics and groups but not the runs' resume state — in
// one read transaction, which its commits never wait for. A read therefore costs what it reads,
// not the size of the store's trajectories, and never stalls training (see tracking's package
// doc for the protocol, files in STORE.readers/).
//
// # rollout ui: the dashboard
//
//	rollout ui --store rollout.db            # then open http://127.0.0.1:8080/
//
// A local web server over the store, in the one binary and with every asset embedded (plain
// JavaScript drawing SVG: no network access, no CDN). It only reads: it opens the store
// read-only for a request (one opened store serves the requests of the next 300 ms, then is
// closed), or, while a run writes it, reads a snapshot (kept until the run's next commit), so
// it never blocks the writer; it answers GET
// alone (any other method gets 405). It listens on loopback unless --addr names another
// address, and then warns on start that anyone who reaches it can read the store; on loopback
// it answers only requests addressed to localhost or a loopback address (403 otherwise, so
// that no web page can reach it by DNS rebinding). Pages:
//
//   - experiments: each with its variants, seeds, runs by status, progress and last update;
//   - experiment: the comparison table of rollout report at the point chosen in the page
//     (final, best, step:N, tokens:T with the evaluation marks offered, train_flops:F) for the
//     metrics chosen, then curves of any metric against steps, sampled tokens or wall time: the
//     mean over seeds with its 95% band per variant, variants toggled on and off, each variant
//     keeping its colour; then the runs;
//   - run: its record and resolved config, its evaluations, and a curve of every metric;
//   - trees: pick a step and a group (and another group to compare side by side): each tree
//     with its nodes' tokens coloured by entropy (a token's title gives id, entropy and
//     log-probability), a purple |ids where children fork (their fork scores in the node
//     headers), every leaf's text, reward, reward terms, reason and advantage; filtered groups are
//     framed in amber; nodes expand and collapse.
//
// Pages showing a running run (experiments, an experiment, a run) update every 2 s (a committed step shows within a
// few seconds). The same data is JSON under /api/ for scripts (errors are
// {"error": "..."} with status 400, 404 or 500):
//
//	| endpoint | answer |
//	| --- | --- |
//	| /api/experiments | experiments with variants, seeds, runs by status, steps done and planned, tokens, last update |
//	| /api/experiments/NAME | the experiment record, its runs, the metrics recorded, the report's default metrics, token marks |
//	| /api/experiments/NAME/report?at=A&metric=M&baseline=V | exactly what rollout report NAME --at A --metric M --baseline V --format json prints |
//	| /api/experiments/NAME/curves?metric=M&x=step|tokens|time&variant=V | per variant: x, mean, lo, hi (95% band), n, marks |
//	| /api/runs?experiment=NAME | runs, as the store records them (config, status, steps, tokens) |
//	| /api/runs/ID | a run and the names of its metrics |
//	| /api/runs/ID/metrics | every step's record: step, tokens, elapsed_ns, values |
//	| /api/runs/ID/steps/S/groups | the step's rollout groups, each in the JSON of rollout trees --format json |
//	| /api/runs/ID/steps/S/groups/G | one group |
//	| /api/tokens?ids=5,6 | the text of token ids |
//
//	curl -s 'http://127.0.0.1:8080/api/experiments/quickstart/report?at=tokens:20000' | jq '.variants[].metrics[0].mean'
//
// Screenshots: tracking/ui/screenshots/experiment.png (an experiment page) and tree.png (the tree viewer).
//
// # Metrics
//
// Metrics per step (verl/TRL names): reward/mean, reward/std, response_length/mean,
// response_length/clip_ratio, rollout/entropy, groups/zero_std_frac, groups/total (the step's
// groups, filtered ones included), groups/filtered, groups/kept, groups/resample_rounds, actor/pg_loss, actor/pg_clipfrac,
// actor/ppo_kl, actor/kl_ref, actor/grad_norm, is/ratio_mean, mismatch/abs_logp,
// mismatch/kl, mismatch/ratio_p10|p50|p90, and in int8, stale or corrected runs mismatch/chi2,
// mismatch/ess and is/masked_frac, adv/thin_baselines (baselines resting on one rollout; a
// warning on stderr when above 0), with rollout.adaptive adaptive/forks_mean and
// adaptive/pass_rate_mean, buffer/stale_groups, buffer/mean_staleness (their mean age in policy versions, when there are any), budget/tokens,
// budget/tokens_cum, budget/prefill_tokens, budget/flops, budget/train_flops and
// budget/train_flops_cum (the update's FLOPs: every trained sequence position at its
// context's forward FLOPs, once for π_old, once for π_ref when kl_coef > 0 and 3× per epoch),
// budget/unspent (last step of a total_tokens run: the tokens left), with train.total_flops or
// eval.every_flops budget/total_flops and budget/total_flops_cum (sampling, reward-model
// scoring and update FLOPs, counted as they run) and budget/unspent_flops, with a reward model
// budget/score_flops, overlong/masked (with train.overlong: filter: the leaves cut at the cap left out of the loss), tree/leaves, tree/forks,
// tree/unique_responses, train/bf16 (with train.bf16: true: 1 if the BF16 products ran, 0
// if this CPU trained in float32), timing_s/gen|update|eval (wall times: the only values that
// differ between identical runs), and at evaluation steps eval/acc (greedy), eval/reward_mean,
// eval/pass@1, eval/pass@k, eval/maj@k, eval/tokens (the tokens the evaluation's samples
// generated), and with eval.every_tokens E eval/tokens_mark
// (the mark 0, E, 2E, … evaluated at that step), with eval.every_flops F eval/flops_mark. Step 0 is the base policy's evaluation.
package main
