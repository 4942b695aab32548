package placementsrv

import "net/http"

// explanations are webob's standard texts per status, whitespace-normalized
// as webob does at import time; upstream's error detail starts with them.
var explanations = map[int]string{
	400: "The server could not comply with the request since it is either malformed or otherwise incorrect.",
	401: "This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.",
	403: "Access was denied to this resource.",
	404: "The resource could not be found.",
	405: "",
	406: "",
	409: "There was a conflict when trying to complete your request.",
	415: "",
	500: "The server has either erred or is incapable of performing the requested operation.",
}

// errorTitle is the HTTP reason phrase webob uses as the title.
func errorTitle(status int) string {
	switch status {
	case 406:
		return "Not Acceptable"
	case 415:
		return "Unsupported Media Type"
	}
	t := http.StatusText(status)
	if t == "" {
		return "Unknown"
	}
	return t
}
