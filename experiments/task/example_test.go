package task_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/rollout-rl/rollout/experiments/task"
)

// A task makes prompts with a correct demonstration and grades responses.
func Example() {
	add, err := task.New("add", task.AddParams{Digits: 3, Scratchpad: true})
	if err != nil {
		log.Fatal(err)
	}
	p, err := add.ParsePrompt("758+467")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("prompt:", p.Text)
	fmt.Println("demo:  ", p.Demo)
	for _, response := range []string{p.Demo, "15 12 12=1224", "15 12 1"} {
		v := add.Verify(p, response)
		fmt.Printf("%-15q reward %.0f %-12s answer %q, answer starts at %d\n",
			response, v.Reward, v.Reason, v.Answer, add.AnswerStart(p, response))
	}
	// Output:
	// prompt: 758+467
	// demo:   15 12 12=1225
	// "15 12 12=1225" reward 1 correct      answer "1225", answer starts at 9
	// "15 12 12=1224" reward 0 wrong_answer answer "1224", answer starts at 9
	// "15 12 1"       reward 0 parse_error  answer "", answer starts at 7
}

// Countdown accepts any expression that reaches the target with the given
// numbers.
func Example_countdown() {
	cd, err := task.New("countdown", task.CountdownParams{Numbers: 4, MinNumber: 1, MaxNumber: 9, MinTarget: 10, MaxTarget: 50})
	if err != nil {
		log.Fatal(err)
	}
	p, err := cd.ParsePrompt("4 7 9 7:23")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("demo:", p.Demo)
	for _, response := range []string{"9+7+7", "(9-7)*7+9=23", "4/(7-7)", "9*4-7-7+1", "(4+7"} {
		v := cd.Verify(p, response)
		fmt.Printf("%-14q %.0f %s\n", response, v.Reward, v.Reason)
	}
	// Output:
	// demo: 7+7+9=23
	// "9+7+7"        1 correct
	// "(9-7)*7+9=23" 0 reused_number
	// "4/(7-7)"      0 division_by_zero
	// "9*4-7-7+1"    0 unknown_number
	// "(4+7"         0 parse_error
}

// Generated path prompts hide a dead end next to the start; flawed
// demonstrations walk into it or skip a node of the route.
func Example_path() {
	path, err := task.New("path", nil)
	if err != nil {
		log.Fatal(err)
	}
	p, err := path.Prompt(task.Eval, 1, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("prompt:", p.Text)
	fmt.Println("demo:  ", p.Demo, path.Verify(p, p.Demo).Reason)
	rng := rand.New(rand.NewPCG(5, 2))
	for range 3 {
		flawed := path.FlawedDemo(p, rng)
		fmt.Println("flawed:", flawed, path.Verify(p, flawed).Reason)
	}
	fmt.Println("fits the tiny model:", task.CheckFits(path, 64) == nil)
	// Output:
	// prompt: ag bh cd cf ch df eg gh:c>a
	// demo:   chga correct
	// flawed: cdf not_at_goal
	// flawed: cdfa illegal_move
	// flawed: cga illegal_move
	// fits the tiny model: true
}

// A search task draws a fresh demonstration at every call of DemoFor, its
// choices uniform among the valid next steps, every one of them correct;
// the prompt's Demo is one fixed draw.
func ExampleDemoFor() {
	dag, err := task.New("dag_search", task.DAGSearchParams{Layers: 3, Width: 2, MaxDeadEnds: 3})
	if err != nil {
		log.Fatal(err)
	}
	p, err := dag.ParsePrompt("ab ac bd ce cf eg:a>g")
	if err != nil {
		log.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5 {
		d := task.DemoFor(dag, p, rng)
		fmt.Printf("%-22q %s\n", d, dag.Verify(p, d).Reason)
	}
	// Output:
	// "aceg:aceg"            correct
	// "abd!;aceg:aceg"       correct
	// "aceg:aceg"            correct
	// "abd!;aceg:aceg"       correct
	// "acf!;aceg:aceg"       correct
}
