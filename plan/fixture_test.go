package plan

// fourTasks are the tasks of the design's claim: one needs summarization,
// one brainstorming, one structured extraction, one data analysis and
// code generation. The text is written as a planner or a person would
// write it, not to please the ranker.
func fourTasks() []Task {
	return []Task{
		{
			ID:          "t1",
			Description: "Summarize the three customer interview transcripts into a one-page brief of the main complaints.",
			AgentSpec: AgentSpec{Name: "research_summarizer", Description: "Reads long material and condenses it for busy readers.",
				Instructions: "Keep quotes short and attribute each complaint to the interviews it came from."},
			Instructions: "Produce the brief as Markdown.",
			DependsOn:    []string{},
			Needs:        []Need{},
		},
		{
			ID:          "t2",
			Description: "Come up with a dozen possible names for the new budgeting app and pick the three strongest.",
			AgentSpec: AgentSpec{Name: "naming_partner", Description: "A creative partner for ideas and names.",
				Instructions: "Favour short names that are easy to say."},
			Instructions: "List every idea, then the three picks with one line each on why.",
			DependsOn:    []string{"t1"},
			Needs:        []Need{{Task: "t1", Output: "brief"}},
		},
		{
			ID:          "t3",
			Description: "Extract the invoice number, date, vendor and total amount from each scanned invoice into JSON records.",
			AgentSpec: AgentSpec{Name: "invoice_clerk", Description: "Turns documents into clean records.",
				Instructions: "Leave a field empty rather than guess."},
			Instructions: "Return one record per invoice.",
			DependsOn:    []string{},
			Needs:        []Need{},
		},
		{
			ID:          "t4",
			Description: "Analyze last year's monthly sales figures for seasonal trends, and write a Python script that plots them.",
			AgentSpec: AgentSpec{Name: "sales_analyst", Description: "Finds patterns in business numbers and automates reports.",
				Instructions: "Explain every trend in one sentence."},
			Instructions: "Deliver the findings and the script.",
			DependsOn:    []string{"t3"},
			Needs:        []Need{{Task: "t3", Output: "records"}},
		},
	}
}
