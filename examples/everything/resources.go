package main

import (
	"context"
	"encoding/json"

	"github.com/mcpkit/mcpkit/core"
)

// staticResource registers a resource whose contents never change.
func staticResource(s *core.Server, r core.Resource, contents core.ResourceContents) {
	contents.URI = r.URI
	contents.MimeType = r.MimeType
	s.AddResource(&r, func(context.Context, *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{contents}}, nil
	})
}

// templateData is the JSON document served for test://template/{id}/data.
type templateData struct {
	ID           string `json:"id"`
	TemplateTest bool   `json:"templateTest"`
	Data         string `json:"data"`
}

// addResources registers the resources of the fixture, test://static-text first: the caching
// scenario reads the first listed resource.
func addResources(s *core.Server) {
	staticResource(s, core.Resource{
		URI:         "test://static-text",
		Name:        "static-text",
		Title:       "Static Text Resource",
		Description: "A static text resource for testing",
		MimeType:    "text/plain",
	}, core.ResourceContents{Text: "This is the content of the static text resource."})

	staticResource(s, core.Resource{
		URI:         "test://static-binary",
		Name:        "static-binary",
		Title:       "Static Binary Resource",
		Description: "A static binary resource (a 1x1 PNG) for testing",
		MimeType:    "image/png",
	}, core.ResourceContents{Blob: pngBase64})

	staticResource(s, core.Resource{
		URI:         "test://watched-resource",
		Name:        "watched-resource",
		Title:       "Watched Resource",
		Description: "A resource clients may subscribe to",
		MimeType:    "text/plain",
	}, core.ResourceContents{Text: "Watched resource content"})

	s.AddResourceTemplate(&core.ResourceTemplate{
		URITemplate: "test://template/{id}/data",
		Name:        "template",
		Title:       "Template Resource",
		Description: "A JSON document for any id",
		MimeType:    "application/json",
	}, func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
		id := req.Vars["id"]
		text, err := json.Marshal(templateData{ID: id, TemplateTest: true, Data: "Data for ID: " + id})
		if err != nil {
			return nil, err
		}
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{
			URI:      req.URI,
			MimeType: "application/json",
			Text:     string(text),
		}}}, nil
	})
}
